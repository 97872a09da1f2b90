/* The HUD's built-in pixel font (font.c). */
#ifndef PBF_RENDER_FONT_H
#define PBF_RENDER_FONT_H

#define PBF_FONT_GLYPH_W 5
#define PBF_FONT_GLYPH_H 7
/* Each glyph sits in a 6x9 cell (one column and two rows of spacing); 16 cells per atlas row,
 * rows top first. */
#define PBF_FONT_CELL_W 6
#define PBF_FONT_CELL_H 9
#define PBF_FONT_ATLAS_W (16 * PBF_FONT_CELL_W)
#define PBF_FONT_ATLAS_H (6 * PBF_FONT_CELL_H)

/* Fills a PBF_FONT_ATLAS_W x PBF_FONT_ATLAS_H 8-bit image, 255 where a glyph pixel is set.
 * Cell of character c (32..126): index c - 32, column index % 16, row index / 16. */
void pbf_font_build_atlas(unsigned char *atlas);

#endif
