/* OpenGL for the renderer: types and enums from the Khronos core header, entry points loaded at
 * run time through the context's get-proc function (eglGetProcAddress, glfwGetProcAddress).
 *
 * Why a loader rather than linking libGL/libOpenGL: the same library then runs on Mesa
 * (llvmpipe, through EGL surfaceless or device platforms) and on NVIDIA's EGL, with no link-time
 * dependency on a particular vendor's dispatch library. Every name below maps to a pointer
 * defined in gl.c from the list in gl_functions.h; a name missing from either fails the build. */
#ifndef PBF_RENDER_GL_H
#define PBF_RENDER_GL_H

#include <GL/glcorearb.h>

#include "pbf/render.h"

#define X(name, type) extern type pbf_##name;
#include "gl_functions.h"
#undef X

#define glActiveTexture pbf_glActiveTexture
#define glAttachShader pbf_glAttachShader
#define glBindBuffer pbf_glBindBuffer
#define glBindFramebuffer pbf_glBindFramebuffer
#define glBindTexture pbf_glBindTexture
#define glBindVertexArray pbf_glBindVertexArray
#define glBlendFunc pbf_glBlendFunc
#define glBlendFuncSeparate pbf_glBlendFuncSeparate
#define glBlitFramebuffer pbf_glBlitFramebuffer
#define glBufferData pbf_glBufferData
#define glBufferSubData pbf_glBufferSubData
#define glCheckFramebufferStatus pbf_glCheckFramebufferStatus
#define glClear pbf_glClear
#define glClearBufferfv pbf_glClearBufferfv
#define glClearColor pbf_glClearColor
#define glClearDepth pbf_glClearDepth
#define glColorMask pbf_glColorMask
#define glCompileShader pbf_glCompileShader
#define glCreateProgram pbf_glCreateProgram
#define glCreateShader pbf_glCreateShader
#define glCullFace pbf_glCullFace
#define glDeleteBuffers pbf_glDeleteBuffers
#define glDeleteFramebuffers pbf_glDeleteFramebuffers
#define glDeleteProgram pbf_glDeleteProgram
#define glDeleteQueries pbf_glDeleteQueries
#define glDeleteShader pbf_glDeleteShader
#define glDeleteTextures pbf_glDeleteTextures
#define glDeleteVertexArrays pbf_glDeleteVertexArrays
#define glDepthFunc pbf_glDepthFunc
#define glDepthMask pbf_glDepthMask
#define glDisable pbf_glDisable
#define glDrawArrays pbf_glDrawArrays
#define glDisableVertexAttribArray pbf_glDisableVertexAttribArray
#define glDrawArraysInstanced pbf_glDrawArraysInstanced
#define glDrawBuffer pbf_glDrawBuffer
#define glDrawBuffers pbf_glDrawBuffers
#define glDrawElements pbf_glDrawElements
#define glEnable pbf_glEnable
#define glEnableVertexAttribArray pbf_glEnableVertexAttribArray
#define glFinish pbf_glFinish
#define glFramebufferTexture2D pbf_glFramebufferTexture2D
#define glGenBuffers pbf_glGenBuffers
#define glGenFramebuffers pbf_glGenFramebuffers
#define glGenQueries pbf_glGenQueries
#define glGenTextures pbf_glGenTextures
#define glGenVertexArrays pbf_glGenVertexArrays
#define glGetError pbf_glGetError
#define glGetIntegerv pbf_glGetIntegerv
#define glGetProgramInfoLog pbf_glGetProgramInfoLog
#define glGetProgramiv pbf_glGetProgramiv
#define glGetQueryObjectui64v pbf_glGetQueryObjectui64v
#define glGetShaderInfoLog pbf_glGetShaderInfoLog
#define glGetShaderiv pbf_glGetShaderiv
#define glGetString pbf_glGetString
#define glGetUniformLocation pbf_glGetUniformLocation
#define glLineWidth pbf_glLineWidth
#define glLinkProgram pbf_glLinkProgram
#define glPixelStorei pbf_glPixelStorei
#define glQueryCounter pbf_glQueryCounter
#define glReadBuffer pbf_glReadBuffer
#define glReadPixels pbf_glReadPixels
#define glShaderSource pbf_glShaderSource
#define glTexImage2D pbf_glTexImage2D
#define glTexParameteri pbf_glTexParameteri
#define glUniform1f pbf_glUniform1f
#define glUniform1i pbf_glUniform1i
#define glUniform2f pbf_glUniform2f
#define glUniform2i pbf_glUniform2i
#define glUniform3f pbf_glUniform3f
#define glUniform3fv pbf_glUniform3fv
#define glUniform4f pbf_glUniform4f
#define glUniformMatrix4fv pbf_glUniformMatrix4fv
#define glUseProgram pbf_glUseProgram
#define glVertexAttrib1f pbf_glVertexAttrib1f
#define glVertexAttribDivisor pbf_glVertexAttribDivisor
#define glVertexAttribPointer pbf_glVertexAttribPointer
#define glViewport pbf_glViewport

/* Loads every entry point; fails naming the first one that is missing. */
pbf_status pbf_gl_load_functions(pbf_gl_get_proc get_proc, char *err, size_t err_size);
/* 1 after a successful load. */
int pbf_gl_loaded(void);

#endif /* PBF_RENDER_GL_H */
