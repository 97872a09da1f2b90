/* The tool's files in the output folder of `pbf run` (docs/tool.md):
 *
 *   forces.csv   one row per frame, written after the frame's stats row: the tool's pose and the
 *                force on it (total, reaction, adhesion, damping) in N, averaged over the step
 *   forces.gp    a gnuplot script that draws forces.csv (redraw: cd DIR && gnuplot forces.gp)
 *   forces.png   the plot, drawn at the end of the run when gnuplot is installed
 *
 * `pbf haptic` writes the same columns (and its own) through tool_csv_header / tool_csv_row. */
#ifndef PBF_APP_TOOL_OUTPUT_H
#define PBF_APP_TOOL_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "pbf/scene.h"

typedef struct tool_output tool_output;

/* The columns after the caller's first ones: "time,x,y,z,vx,vy,vz,fx,fy,fz,reaction_x,...". */
const char *tool_csv_columns(void);
/* The values of those columns for a state, without a newline. Returns the length written. */
int tool_csv_values(char *buf, size_t size, const pbf_tool_state *s);

/* Opens DIR/forces.csv (header written atomically) and DIR/forces.gp. *out is NULL (and 0 is
 * returned) when the scene has no tool. Prints the error and returns non-zero on failure. */
int tool_output_open(tool_output **out, const char *dir, const pbf_scene *scene);
/* Resuming at `frame` (pbf resume): keeps the header and the rows of frames 0..frame. */
int tool_output_resume(tool_output **out, const char *dir, const pbf_scene *scene, int frame);
/* Appends the row of `frame` (one write, flushed). Non-zero with err set on failure. */
int tool_output_row(tool_output *o, const pbf_world *world, int frame, char *err, size_t err_size);
/* Closes forces.csv and draws forces.png with gnuplot; a missing or failing gnuplot is a note
 * on stderr (forces.csv stays), never an error. NULL is fine. */
void tool_output_close(tool_output *o);

#endif
