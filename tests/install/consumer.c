/* A program outside the project, built against an installed tile with pkg-config and with find_package(tile). */
#include <tile/tile.h>
#include <stdio.h>
int main(void) {
    tile_compile_options o = {0};
    tile_compiled c;
    tile_status s = tile_compile_source("k.tile", "kernel k(x: *f32) { store(x + arange(0, 128), zeros([128], f32)); }", &o, &c);
    printf("%s %d\n", tile_status_string(s), c.ptx != NULL);
    tile_compiled_free(&c);
    return s != TILE_OK;
}
