/* test_cache_safety.c - the compile cache against other users and careless
 * callers (docs/runtime.md, "Who the cache trusts"): no symlink inside the
 * folder is followed to delete, write or count; a folder owned by another
 * user, writable by others or itself a symlink is not used; the default
 * folder without HOME and XDG_CACHE_HOME is private; an entry copied to
 * another key's path is a miss, and so is a file there whose header does not
 * agree with its size (not read past the header); code compiled while an
 * import changed is stored under no key and recorded for no text; tune.db records outside the kernel's @config
 * space are ignored (and tile_gemm stays correct); a read-only folder, one
 * where a folder is a file, no permission and the file-size limit each
 * leave the compile successful with one warning.
 *
 * The tests run as root: another user's folder is made with chown (65534)
 * and a read-only one with a read-only bind mount in a mount namespace
 * (unshare -m); a test skips, saying why, where that is impossible.
 * Criterion runs each test in its own process, so each sees the library's
 * once-per-process warnings afresh. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "support/hostfloat.h"

#define ADD TILE_SOURCE_DIR "/kernels/add.tile"
#define SOFTMAX TILE_SOURCE_DIR "/kernels/softmax.tile"
#define NOBODY 65534

static char dir[64];
static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/tile-test-safety-XXXXXX");
    cr_assert(mkdtemp(dir));
}
static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    system(cmd);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

static off_t file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* Number of names in a folder (no . and ..). */
static int entries_in(const char *path) {
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

/* stderr into a file while the library runs */
static int saved_fd = -1;
static char cap_path[128];
static void capture_begin(void) {
    snprintf(cap_path, sizeof cap_path, "%s/stderr", dir);
    fflush(stderr);
    saved_fd = dup(2);
    int fd = open(cap_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0);
    dup2(fd, 2);
    close(fd);
}
static char *capture_end(void) {
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    return slurp(cap_path);
}

static tile_status compile_add(const char *cache, int *hit) {
    tile_compile_options o = {.kernel = "add"};
    tile_compiled c;
    tile_status st = tile_cache_compile_file(cache, ADD, &o, &c, hit);
    if (st == TILE_OK) cr_assert(c.nkernels == 1 && !strcmp(c.kernels[0].name, "add"), "the entry is add's");
    tile_compiled_free(&c);
    return st;
}

/* the key of add.tile's entry: KK (2 hex digits) and the file name (30) */
static void collect_key(void *user, const char *key, const char *source, const char *kernels, uint64_t bytes) {
    (void)bytes;
    if (strstr(source, "add.tile") && !strcmp(kernels, "add")) snprintf(user, 40, "%s", key);
}
static void add_key(char key[40]) {
    char cache[128];
    snprintf(cache, sizeof cache, "%s/keycache", dir);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    key[0] = 0;
    cr_assert_eq(tile_cache_list(cache, collect_key, key), TILE_OK);
    cr_assert_eq(strlen(key), 32, "add's key: '%s'", key);
}

/* tile cache clear through a symlinked v1/KK (and a symlinked entry, stats
 * and tune.db) deletes nothing outside the folder, and nothing inside it
 * that is not named as the cache names things. */
Test(cache_safety, clear_follows_no_symlink, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], victim[128], p[512], q[512], key[40];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    cr_assert_eq(mkdir(victim, 0700), 0);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(tile_cache_list(cache, collect_key, key), TILE_OK);
    /* the victim's files: one named like an entry, one like stats, one other */
    const char *names[] = {"0123456789abcdef0123456789abcd", "stats", "tune.db", "precious"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", victim, names[i]);
        write_file(p, "keep me\n");
    }
    const char *kk = key[0] == 'a' ? "b0" : "a0"; /* a KK the real entry does not use */
    snprintf(p, sizeof p, "%s/v1/%s", cache, kk);
    cr_assert_eq(symlink(victim, p), 0);
    snprintf(p, sizeof p, "%s/v1/%.2s/fedcba9876543210fedcba98765432", cache, key);
    snprintf(q, sizeof q, "%s/%s", victim, names[0]);
    cr_assert_eq(symlink(q, p), 0);
    snprintf(p, sizeof p, "%s/stats", cache);
    cr_assert_eq(unlink(p), 0);
    snprintf(q, sizeof q, "%s/stats", victim);
    cr_assert_eq(symlink(q, p), 0);
    snprintf(p, sizeof p, "%s/tune.db", cache);
    snprintf(q, sizeof q, "%s/tune.db", victim);
    cr_assert_eq(symlink(q, p), 0);
    /* files of other names inside the folder */
    snprintf(p, sizeof p, "%s/notes.txt", cache);
    write_file(p, "mine\n");
    snprintf(p, sizeof p, "%s/v1/%.2s/notes.txt", cache, key);
    write_file(p, "mine\n");

    cr_assert_eq(tile_cache_clear(cache, 1), TILE_OK);
    cr_assert_eq(entries_in(victim), 4, "clear deleted files in the target of a symlink");
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", victim, names[i]);
        cr_assert_eq(file_size(p), 8, "%s was touched", p);
    }
    snprintf(p, sizeof p, "%s/v1/%.2s/%s", cache, key, key + 2);
    cr_assert_eq(file_size(p), -1, "the real entry is cleared");
    snprintf(p, sizeof p, "%s/notes.txt", cache);
    cr_assert_eq(file_size(p), 5, "a file of another name stays");
    snprintf(p, sizeof p, "%s/v1/%.2s/notes.txt", cache, key);
    cr_assert_eq(file_size(p), 5, "a file of another name stays");
}

/* A symlinked v1/KK, v1 or stats is not written through: the compile
 * succeeds with one warning and the target stays untouched. */
/* tile cache clear of a folder that is no cache (`--dir ~`) keeps a file named stats that is not the cache's
 * counters (it was deleted): other text, an empty file (it read as counters with none counted, and went), or
 * counters-like bytes without the cache's v1 folder; a cache's own stats goes. */
Test(cache_safety, clear_keeps_a_foreign_stats, .init = setup, .fini = teardown, .timeout = 60) {
    char home[128], cache[128], p[512];
    snprintf(home, sizeof home, "%s/home", dir);
    cr_assert_eq(mkdir(home, 0700), 0);
    snprintf(p, sizeof p, "%s/stats", home);
    write_file(p, "hmm, my numbers\n");
    cr_assert_eq(tile_cache_clear(home, 1), TILE_OK);
    cr_assert_eq(file_size(p), 16, "a stats file that is not the cache's was removed");
    write_file(p, "");
    cr_assert_eq(tile_cache_clear(home, 1), TILE_OK);
    cr_assert_eq(file_size(p), 0, "an empty stats file that is not the cache's was removed");
    write_file(p, "hmhm");
    cr_assert_eq(tile_cache_clear(home, 1), TILE_OK);
    cr_assert_eq(file_size(p), 4, "a stats file in a folder without v1 was removed");
    snprintf(cache, sizeof cache, "%s/cache", dir);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    snprintf(p, sizeof p, "%s/stats", cache);
    cr_assert_eq(file_size(p), 2, "a miss and a hit counted");
    cr_assert_eq(tile_cache_clear(cache, 1), TILE_OK);
    cr_assert_eq(file_size(p), -1, "the cache's stats is cleared");
}

Test(cache_safety, write_follows_no_symlink, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], victim[128], p[512], key[40];
    add_key(key);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    cr_assert_eq(mkdir(victim, 0700), 0);
    cr_assert_eq(mkdir(cache, 0700), 0);
    snprintf(p, sizeof p, "%s/v1", cache);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/v1/%.2s", cache, key);
    cr_assert_eq(symlink(victim, p), 0);
    capture_begin();
    int hit;
    tile_status st1 = compile_add(cache, &hit), st2 = compile_add(cache, &hit);
    char *err = capture_end();
    cr_assert_eq(st1, TILE_OK);
    cr_assert_eq(st2, TILE_OK);
    cr_assert_eq(hit, 0);
    cr_assert_eq(entries_in(victim), 0, "an entry was written through the symlinked v1/%.2s", key);
    cr_assert_eq(count(err, "tile: warning:"), 1, "%s", err);
    cr_assert(strstr(err, "symbolic link"), "%s", err);
    free(err);

    /* v1 itself a symlink */
    snprintf(p, sizeof p, "%s/v1/%.2s", cache, key);
    cr_assert_eq(unlink(p), 0);
    snprintf(p, sizeof p, "%s/v1", cache);
    cr_assert_eq(rmdir(p), 0);
    cr_assert_eq(symlink(victim, p), 0);
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(entries_in(victim), 0, "an entry was written through the symlinked v1");
}

/* Nothing is read through a symlink: an entry or tune.db that is one is a miss. */
Test(cache_safety, read_follows_no_symlink, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], victim[128], p[512], key[40], cmd[2048];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(tile_cache_list(cache, collect_key, key), TILE_OK);
    snprintf(p, sizeof p, "%s/v1/%.2s/%s", cache, key, key + 2);
    snprintf(cmd, sizeof cmd, "mv %s %s && ln -s %s %s", p, victim, victim, p);
    cr_assert_eq(system(cmd), 0);
    off_t size = file_size(victim);
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(hit, 0, "an entry was read through a symlink");
    cr_assert_eq(file_size(victim), size, "the symlink's target was touched");
    struct stat sb;
    cr_assert_eq(lstat(p, &sb), 0);
    cr_assert(S_ISREG(sb.st_mode), "the rebuilt entry replaces the symlink");

    char id[33], cfg[256], db[256], tdb[256];
    cr_assert_eq(tile_kernel_id_file(tile_gemm_source_path(), "no_such_kernel", id), TILE_ERROR_NOT_FOUND);
    cr_assert_str_eq(id, "");
    cr_assert_eq(tile_kernel_id_file(tile_gemm_source_path(), "gemm_f16_f32", id), TILE_OK);
    snprintf(tdb, sizeof tdb, "%s/tune.db", dir);
    snprintf(db, sizeof db, "%s/tune.db", cache);
    FILE *f = fopen(tdb, "w");
    fprintf(f, "%s\temu/sm_80\tm=32,n=32,k=32\tBM=64 BN=64 BK=32 num_warps=4 num_stages=4\t1e-3\n", id);
    fclose(f);
    cr_assert_eq(symlink(tdb, db), 0);
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "m=32,n=32,k=32", cfg, sizeof cfg), TILE_ERROR_NOT_FOUND,
                 "tune.db was read through a symlink");
    off_t before = file_size(tdb);
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "m=32,n=32,k=32", "BM=64", 1), TILE_ERROR_IO);
    cr_assert_eq(file_size(tdb), before, "tune.db was appended through a symlink");
    /* tune.lock, a symlink to a file that does not exist: not created through it; the record is still written */
    char lock[256], target[256];
    cr_assert_eq(unlink(db), 0);
    snprintf(lock, sizeof lock, "%s/tune.lock", cache);
    snprintf(target, sizeof target, "%s/lock-target", dir);
    cr_assert_eq(unlink(lock), 0, "the record above made tune.lock");
    cr_assert_eq(symlink(target, lock), 0);
    cr_assert_eq(tile_tune_record(cache, id, "emu/sm_80", "m=32,n=32,k=32", "BM=64", 1), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_eq(file_size(target), -1, "tune.lock was created through a symlink");
    cr_assert_eq(tile_tune_lookup(cache, id, "emu/sm_80", "m=32,n=32,k=32", cfg, sizeof cfg), TILE_OK);
    cr_assert_str_eq(cfg, "BM=64");
}

Test(cache_safety, stats_follows_no_symlink, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], victim[128], p[512];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    write_file(victim, "");
    cr_assert_eq(mkdir(cache, 0700), 0);
    snprintf(p, sizeof p, "%s/stats", cache);
    cr_assert_eq(symlink(victim, p), 0);
    capture_begin();
    int hit;
    tile_status st1 = compile_add(cache, &hit), st2 = compile_add(cache, &hit);
    char *err = capture_end();
    cr_assert_eq(st1, TILE_OK);
    cr_assert_eq(st2, TILE_OK);
    cr_assert_eq(hit, 1, "entries still work");
    cr_assert_eq(file_size(victim), 0, "compiles appended to the target of the stats symlink");
    cr_assert_eq(count(err, "tile: warning:"), 1, "%s", err);
    free(err);
}

/* A folder another user owns, or one others can write, holds entries the
 * compile must not serve (a planted entry looks like any other): it is not
 * used at all, with one warning, and nothing is written into it. */
static void refused_folder(const char *cache, const char *needle) {
    char stats[256];
    snprintf(stats, sizeof stats, "%s/stats", cache);
    off_t before = file_size(stats);
    capture_begin();
    int hit1 = -1, hit2 = -1;
    tile_status st1 = compile_add(cache, &hit1), st2 = compile_add(cache, &hit2);
    char *err = capture_end();
    cr_assert_eq(st1, TILE_OK);
    cr_assert_eq(st2, TILE_OK);
    cr_assert_eq(hit1, 0, "an entry of a refused folder was served");
    cr_assert_eq(hit2, 0, "an entry of a refused folder was served");
    cr_assert_eq(file_size(stats), before, "a refused folder was written");
    cr_assert_eq(count(err, "tile: warning:"), 1, "%s", err);
    cr_assert(strstr(err, needle), "'%s' lacks '%s'", err, needle);
    free(err);
    tile_cache_stats s;
    cr_assert_neq(tile_cache_get_stats(cache, &s), TILE_OK, "stats of a refused folder");
    cr_assert(strstr(tile_last_error(NULL), needle), "'%s' lacks '%s'", tile_last_error(NULL), needle);
    cr_assert_neq(tile_cache_clear(cache, 1), TILE_OK, "clear of a refused folder");
    cr_assert(strstr(tile_last_error(NULL), needle), "'%s' lacks '%s'", tile_last_error(NULL), needle);
}

Test(cache_safety, foreign_owned_folder_refused, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK); /* a good entry: as good as a planted one */
    if (chown(cache, NOBODY, NOBODY) != 0) cr_skip("chown to uid %d is impossible here (%s): run as root", NOBODY, strerror(errno));
    if (geteuid() == NOBODY) cr_skip("the test runs as uid %d itself", NOBODY);
    refused_folder(cache, "owned by uid 65534");
}

Test(cache_safety, writable_folder_refused, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(chmod(cache, 0777), 0);
    refused_folder(cache, "mode 0777");
}

Test(cache_safety, group_writable_folder_refused, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(chmod(cache, 0770), 0);
    refused_folder(cache, "mode 0770");
}

Test(cache_safety, symlinked_folder_refused, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], link[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(symlink(cache, link), 0);
    refused_folder(link, "symbolic link");
}

/* `tile cache clear` of the user's own folder whose entries it may not remove (made read-only): exit 3 saying
 * so, where it said the folder was no cache folder this user can use, "the reason is above", and none was.
 * Acts as uid 65534 through setpriv: root, for whom nothing is read-only, runs the suite. */
Test(cache_safety, clear_of_a_read_only_folder, .init = setup, .fini = teardown, .timeout = 60) {
    const char *as = "setpriv --reuid=65534 --regid=65534 --clear-groups env -i";
    char cache[128], cmd[1024], log[128];
    snprintf(cache, sizeof cache, "%s/ro", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    cr_assert_eq(chmod(dir, 0711), 0);
    cr_assert_eq(mkdir(cache, 0700), 0);
    if (geteuid() != 0 || chown(cache, NOBODY, NOBODY) != 0) cr_skip("needs root, to act as uid %d", NOBODY);
    snprintf(cmd, sizeof cmd, "%s %s --version > /dev/null 2>&1", as, TILE_CLI);
    if (system(cmd) != 0) cr_skip("uid %d cannot run %s (setpriv missing, or the build is not readable by others)", NOBODY, TILE_CLI);
    snprintf(cmd, sizeof cmd, "%s TILE_CACHE_DIR=%s %s compile %s -o /dev/null > %s 2>&1", as, cache, TILE_CLI, ADD, log);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "chmod -R u-w %s", cache);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s TILE_CACHE_DIR=%s %s cache clear > %s 2>&1", as, cache, TILE_CLI, log);
    int rc = system(cmd);
    char *out = slurp(log);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 3, "exit %d: %s", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out);
    cr_expect(strstr(out, "could not remove every entry of") && strstr(out, "(1 left, Permission denied: "), "%s", out);
    cr_expect(!strstr(out, "the reason is above"), "%s", out);
    free(out);
}

/* Without TILE_CACHE_DIR, XDG_CACHE_HOME and HOME the folder is this user's
 * own in TMPDIR (or /tmp), made 0700; pre-created by someone else or with
 * the wrong mode it is refused and the compile goes on. */
static int run_cli(const char *env, const char *args, char *out, size_t n) {
    char cmd[1024], log[128];
    snprintf(log, sizeof log, "%s/cli.log", dir);
    snprintf(cmd, sizeof cmd, "env -i %s %s %s > %s 2>&1", env, TILE_CLI, args, log);
    int rc = system(cmd);
    char *s = slurp(log);
    snprintf(out, n, "%s", s);
    free(s);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* `tile cache stats|list|clear` of a folder the library refuses, or of a file: exit 3 with the reason on the
 * same line, and no warning about compiling (these commands compile nothing). */
Test(cache_safety, cli_names_why_a_folder_is_refused, .init = setup, .fini = teardown, .timeout = 60) {
    char file[128], open[128], args[512], out[8192];
    snprintf(file, sizeof file, "%s/file", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fclose(f);
    snprintf(open, sizeof open, "%s/open", dir);
    cr_assert_eq(mkdir(open, 0700), 0);
    cr_assert_eq(chmod(open, 0777), 0);
    const char *cmds[] = {"stats", "list", "clear"}, *did[] = {"read", "listed", "cleared"};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "cache %s --dir %s", cmds[i], file);
        cr_expect_eq(run_cli("", args, out, sizeof out), 3, "%s: %s", args, out);
        cr_expect(strstr(out, "is not a cache folder this user can use: Not a directory; nothing was ") && strstr(out, did[i]), "%s: %s",
                  args, out);
        cr_expect(!strstr(out, "warning") && !strstr(out, "compiling"), "%s: %s", args, out);
        snprintf(args, sizeof args, "cache %s --dir %s", cmds[i], open);
        cr_expect_eq(run_cli("", args, out, sizeof out), 3, "%s: %s", args, out);
        cr_expect(strstr(out, "writable by its group or others (mode 0777"), "%s: %s", args, out);
        cr_expect(!strstr(out, "warning") && !strstr(out, "compiling"), "%s: %s", args, out);
    }
}

/* A relative XDG_CACHE_HOME, HOME or TMPDIR is passed over (the folder would move with the working directory):
 * with all three relative the folder is /tmp's per-user one. */
Test(cache_safety, default_folder_needs_absolute_paths, .init = setup, .fini = teardown, .timeout = 60) {
    char out[8192], want[128];
    snprintf(want, sizeof want, "cache /tmp/tile-cache-%u\n", (unsigned)geteuid());
    cr_assert_eq(run_cli("XDG_CACHE_HOME=rel/xdg HOME=rel/home TMPDIR=rel/tmp", "cache stats", out, sizeof out), 0, "%s", out);
    cr_expect(!strncmp(out, want, strlen(want)), "want '%s', got: %s", want, out);
    cr_assert_eq(run_cli("XDG_CACHE_HOME=rel/xdg HOME=/abs/home", "cache stats", out, sizeof out), 0, "%s", out);
    cr_expect(!strncmp(out, "cache /abs/home/.cache/tile\n", 28), "%s", out);
}

Test(cache_safety, default_folder_without_home, .init = setup, .fini = teardown, .timeout = 60) {
    char tmp[128], env[256], mine[256], out[8192];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    cr_assert_eq(mkdir(tmp, 0755), 0);
    snprintf(env, sizeof env, "TMPDIR=%s", tmp);
    snprintf(mine, sizeof mine, "%s/tile-cache-%u", tmp, (unsigned)geteuid());
    cr_assert_eq(run_cli(env, "compile " ADD " -o /dev/null -v", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "cache: miss"), "%s", out);
    struct stat sb;
    cr_assert_eq(stat(mine, &sb), 0, "no per-user folder %s: %s", mine, out);
    cr_assert_eq(sb.st_mode & 07777, 0700, "mode %o", sb.st_mode & 07777);
    cr_assert_eq(sb.st_uid, geteuid());
    cr_assert_eq(run_cli(env, "compile " ADD " -o /dev/null -v", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "cache: hit"), "%s", out);
    cr_assert_eq(count(out, "warning"), 0, "%s", out);

    /* no TMPDIR either: /tmp/tile-cache-UID, never the shared /tmp/tile-cache */
    cr_assert_eq(run_cli("", "cache stats", out, sizeof out), 0, "%s", out);
    char want[64];
    snprintf(want, sizeof want, "cache /tmp/tile-cache-%u\n", (unsigned)geteuid());
    cr_assert(strstr(out, want), "%s", out);

    /* planted: the per-user folder made by another user with mode 0777 */
    char planted[128];
    snprintf(planted, sizeof planted, "%s/tmp2", dir);
    cr_assert_eq(mkdir(planted, 0755), 0);
    snprintf(env, sizeof env, "TMPDIR=%s", planted);
    snprintf(mine, sizeof mine, "%s/tile-cache-%u", planted, (unsigned)geteuid());
    cr_assert_eq(mkdir(mine, 0777), 0);
    cr_assert_eq(chmod(mine, 0777), 0);
    if (chown(mine, NOBODY, NOBODY) != 0) cr_log_warn("chown impossible (%s): checking the mode alone", strerror(errno));
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(run_cli(env, "compile " ADD " -o /dev/null -v", out, sizeof out), 0, "%s", out);
        cr_assert(strstr(out, "cache: miss"), "%s", out);
        cr_assert_eq(count(out, "tile: warning:"), 1, "%s", out);
        cr_assert(strstr(out, "not using the compile cache"), "%s", out);
    }
    cr_assert_eq(entries_in(mine), 0, "the planted folder was written");
}

/* An entry copied over another key's path is a miss (logged under
 * TILE_DEBUG=cache), then rebuilt. */
static void collect_paths(void *user, const char *key, const char *source, const char *kernels, uint64_t bytes) {
    char(*paths)[40] = user;
    (void)bytes;
    if (strstr(source, "softmax.tile")) snprintf(paths[0], 40, "%s", key);
    if (strstr(source, "add.tile") && !strcmp(kernels, "add")) snprintf(paths[1], 40, "%s", key);
}

Test(cache_safety, entry_of_another_key_is_a_miss, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], keys[2][40] = {"", ""}, from[256], to[256], cmd[1024];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    tile_compile_options o = {.kernel = "softmax"};
    tile_compiled c;
    int hit;
    cr_assert_eq(tile_cache_compile_file(cache, SOFTMAX, &o, &c, &hit), TILE_OK);
    tile_compiled_free(&c);
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(tile_cache_list(cache, collect_paths, keys), TILE_OK);
    cr_assert(keys[0][0] && keys[1][0]);
    snprintf(from, sizeof from, "%s/v1/%.2s/%s", cache, keys[0], keys[0] + 2);
    snprintf(to, sizeof to, "%s/v1/%.2s/%s", cache, keys[1], keys[1] + 2);
    snprintf(cmd, sizeof cmd, "cp %s %s", from, to);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(compile_add(cache, &hit), TILE_OK); /* asserts the result is add's */
    cr_assert_eq(hit, 0, "softmax's entry was served for add");
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    cr_assert_eq(hit, 1, "and add's entry is rebuilt");

    /* the reason, under TILE_DEBUG=cache, with the CLI's own entries */
    char env[256], out[8192];
    snprintf(cache, sizeof cache, "%s/cache2", dir);
    snprintf(env, sizeof env, "TILE_CACHE_DIR=%s", cache);
    cr_assert_eq(run_cli(env, "compile " SOFTMAX " --kernel softmax -o /dev/null", out, sizeof out), 0, "%s", out);
    cr_assert_eq(run_cli(env, "compile " ADD " --kernel add -o /dev/null", out, sizeof out), 0, "%s", out);
    keys[0][0] = keys[1][0] = 0;
    cr_assert_eq(tile_cache_list(cache, collect_paths, keys), TILE_OK);
    cr_assert(keys[0][0] && keys[1][0]);
    snprintf(cmd, sizeof cmd, "cp %s/v1/%.2s/%s %s/v1/%.2s/%s", cache, keys[0], keys[0] + 2, cache, keys[1], keys[1] + 2);
    cr_assert_eq(system(cmd), 0);
    snprintf(env, sizeof env, "TILE_CACHE_DIR=%s TILE_DEBUG=cache", cache);
    cr_assert_eq(run_cli(env, "compile " ADD " --kernel add -o /dev/null -v", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "written for another key"), "%s", out);
    cr_assert(strstr(out, "cache: miss"), "%s", out);
    cr_assert(strstr(out, "its entry was unusable and is removed") && !strstr(out, "source"), "the source did not change: %s", out);
}

/* An entry is read only once its header agrees with the file's size: a
 * sparse 64 GiB file at an entry's path (what a damaged disk or a runaway
 * writer leaves is no entry) is a corrupt entry, found from its first bytes,
 * removed and rebuilt; an entry cut short or grown by appends likewise.
 * Before: the whole file was read into memory first (a 1 GiB file took 22 s
 * and 1.1 GB; at 64 GiB the allocation failed and the entry was only
 * "cannot read" and left in place). */
static void replace_entry(const char *path, const char *how) {
    if (!strcmp(how, "sparse")) {
        cr_assert_eq(unlink(path), 0);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        cr_assert_geq(fd, 0);
        cr_assert_eq(ftruncate(fd, (off_t)64 << 30), 0, "ftruncate: %s", strerror(errno));
        close(fd);
    } else if (!strcmp(how, "half")) cr_assert_eq(truncate(path, file_size(path) / 2), 0);
    else {
        FILE *f = fopen(path, "a");
        cr_assert(f);
        fputs("appended bytes", f);
        fclose(f);
    }
}

Test(cache_safety, entry_header_checked_before_reading, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], env[256], out[8192], path[256], keys[2][40] = {"", ""};
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(env, sizeof env, "TILE_CACHE_DIR=%s", cache);
    cr_assert_eq(run_cli(env, "compile " ADD " --kernel add -o /dev/null", out, sizeof out), 0, "%s", out);
    cr_assert_eq(tile_cache_list(cache, collect_paths, keys), TILE_OK);
    cr_assert(keys[1][0]);
    snprintf(path, sizeof path, "%s/v1/%.2s/%s", cache, keys[1], keys[1] + 2);
    off_t good = file_size(path);
    static const struct { const char *how, *why; } cases[] = {
        {"sparse", "bad magic or truncated header"},
        {"half", "truncated (payload length does not match)"},
        {"append", "truncated (payload length does not match)"},
    };
    snprintf(env, sizeof env, "TILE_CACHE_DIR=%s TILE_DEBUG=cache", cache);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        replace_entry(path, cases[i].how);
        cr_assert_eq(run_cli(env, "compile " ADD " --kernel add -o /dev/null -v", out, sizeof out), 0, "%s: %s", cases[i].how, out);
        cr_assert(strstr(out, "corrupt entry") && strstr(out, cases[i].why), "%s: %s", cases[i].how, out);
        cr_assert(strstr(out, "cache: miss"), "%s: %s", cases[i].how, out);
        cr_assert_eq(file_size(path), good, "%s: the entry is rebuilt", cases[i].how);
    }
    /* tile cache list names a sparse one corrupt, without reading it */
    replace_entry(path, "sparse");
    cr_assert_eq(run_cli(env, "cache list", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "(corrupt)"), "%s", out);
}

/* An import that changes while a kernel compiles: the cache key is taken from
 * the imports as read before the compile, and the compiler reads them again.
 * Code built from the new text must not be stored under the old text's key
 * (nor recorded in memory as built from it), or a later compile with the old
 * text is served the other code.  A thread rewrites the import (whole, by
 * rename) without pause while ten kernels, each with its own -D C=i and so its
 * own key, are compiled; then, with the import held at each text, every
 * kernel must compute that text's V + C, from the disk cache and from a
 * context's memory.  Before: about half the keys held the other text's code
 * (V = 2.5 served for 1.5). */
static char flip_path[160];
static volatile int flip_stop;
/* The import saying V = 1.5 (v 1) or 2.5 (v 2), replaced whole (by rename); false on failure (no assertion:
 * the flipping thread calls it too). */
static bool write_import(const char *path, int v) {
    char tmp[200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return false;
    fprintf(f, "const V: f32 = %s;\n", v == 1 ? "1.5" : "2.5");
    return fclose(f) == 0 && rename(tmp, path) == 0;
}
static void *flip_import(void *u) {
    (void)u;
    for (int i = 0; !__atomic_load_n(&flip_stop, __ATOMIC_RELAXED); i++) (void)write_import(flip_path, 1 + (i & 1));
    return NULL;
}
static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

Test(cache_safety, import_changed_while_compiling, .init = setup, .fini = teardown, .timeout = 120) {
    enum { NK = 10 };
    char main_path[160], cache[160], defs[NK][16];
    snprintf(flip_path, sizeof flip_path, "%s/v.tile", dir);
    snprintf(main_path, sizeof main_path, "%s/k.tile", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    write_file(main_path, "import \"v.tile\";\nkernel k(x: *f32, const C: i32 = 0) { store(x, V + C); }\n");
    cr_assert(write_import(flip_path, 1));
    tile_context_options co = {.size = sizeof co, .device = "emu", .no_disk_cache = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    tile_devptr out;
    cr_assert_eq(tile_malloc(ctx, 4, &out), TILE_OK);
    for (int i = 0; i < NK; i++) snprintf(defs[i], sizeof defs[i], "C=%d", i);
    tile_module *held[NK];
    pthread_t th;
    __atomic_store_n(&flip_stop, 0, __ATOMIC_RELAXED);
    cr_assert_eq(pthread_create(&th, NULL, flip_import, NULL), 0);
    for (int i = 0; i < NK; i++) {
        const char *d[] = {defs[i], NULL};
        tile_compile_options o = {.defines = d, .no_line_info = 1};
        tile_compiled c;
        int hit;
        if (tile_cache_compile_file(cache, main_path, &o, &c, &hit) == TILE_OK) tile_compiled_free(&c);
        if (tile_module_load_file(ctx, main_path, d, &held[i]) != TILE_OK) held[i] = NULL; /* kept loaded: the memory cache */
    }
    __atomic_store_n(&flip_stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    for (int v = 1; v <= 2; v++) {
        cr_assert(write_import(flip_path, v));
        for (int i = 0; i < NK; i++) {
            float want = (v == 1 ? 1.5f : 2.5f) + (float)i;
            char bits[16];
            snprintf(bits, sizeof bits, "%u", f32_bits(want));
            const char *d[] = {defs[i], NULL};
            tile_compile_options o = {.defines = d, .no_line_info = 1};
            tile_compiled c;
            int hit;
            cr_assert_eq(tile_cache_compile_file(cache, main_path, &o, &c, &hit), TILE_OK);
            cr_expect(strstr(c.ptx, bits), "disk cache, import V = %s, C = %d (%s): the code stores no %g", v == 1 ? "1.5" : "2.5", i,
                      hit ? "a hit" : "compiled", want);
            tile_compiled_free(&c);
            tile_module *m;
            tile_kernel *k;
            cr_assert_eq(tile_module_load_file(ctx, main_path, d, &m), TILE_OK, "%s", tile_last_error(ctx));
            cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
            cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, (void *[]){&out}, NULL), TILE_OK, "%s", tile_last_error(ctx));
            float got = 0;
            cr_assert_eq(tile_memcpy_dtoh(ctx, &got, out, 4), TILE_OK);
            cr_expect_eq(got, want, "memory cache, import V = %s, C = %d: %g", v == 1 ? "1.5" : "2.5", i, got);
            tile_module_unload(m);
        }
    }
    for (int i = 0; i < NK; i++)
        if (held[i]) tile_module_unload(held[i]);
    tile_context_destroy(ctx);
}

/* tune.db records outside the kernel's @config space are ignored with a
 * warning, and tile_gemm stays correct (ACT=1 would apply ReLU). */
static const char *dev_key(tile_context *ctx, char *buf, size_t n) {
    tile_device_properties props;
    cr_assert_eq(tile_context_get_properties(ctx, &props), TILE_OK);
    snprintf(buf, n, "%s/%s", props.name, props.arch);
    return buf;
}

Test(cache_safety, forged_tune_records_ignored, .init = setup, .fini = teardown, .timeout = 120) {
    char cache[128], db[256], id[33], dev[160], cfg[256];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    cr_assert_eq(mkdir(cache, 0700), 0);
    snprintf(db, sizeof db, "%s/tune.db", cache);
    cr_assert_eq(tile_kernel_id_file(tile_gemm_source_path(), "gemm_f16_f32", id), TILE_OK);
    tile_context_options co = {.device = "emu", .cache_dir = cache, .emu_host_threads = 2};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    dev_key(ctx, dev, sizeof dev);
    const char *bucket = "m=32,n=32,k=32";
    const char *good = "BM=64 BN=64 BK=32 num_warps=4 num_stages=4";
    const char *forged[] = {"BM=64 BN=64 BK=32 num_warps=4 num_stages=4 ACT=1", "BM=96 BN=64 BK=32 num_warps=4 num_stages=4",
                            "BM=64 BM=128 BN=64", "BM=64;rm BN=64"};
    FILE *f = fopen(db, "w");
    for (int i = 0; i < 4; i++) fprintf(f, "%s\t%s\t%s\t%s\t1e-3\n", id, dev, bucket, forged[i]);
    fclose(f);
    capture_begin();
    tile_status st = tile_tune_lookup_file(cache, tile_gemm_source_path(), "gemm_f16_f32", dev, bucket, cfg, sizeof cfg);
    char *err = capture_end();
    cr_assert_eq(st, TILE_ERROR_NOT_FOUND, "a forged record was returned: %s", cfg);
    cr_assert_eq(count(err, "tile: warning:"), 1, "%s", err);
    free(err);

    /* a good record, then a forged one: the good one is the answer */
    f = fopen(db, "a");
    fprintf(f, "%s\t%s\t%s\t%s\t1e-3\n", id, dev, bucket, good);
    fprintf(f, "%s\t%s\t%s\t%s\t1e-4\n", id, dev, bucket, forged[0]);
    fclose(f);
    cr_assert_eq(tile_tune_lookup_file(cache, tile_gemm_source_path(), "gemm_f16_f32", dev, bucket, cfg, sizeof cfg), TILE_OK);
    cr_assert_str_eq(cfg, good);
    /* by id alone there is no space to check: the form still is (the malformed record is never the answer) */
    cr_assert_eq(tile_tune_lookup(cache, id, dev, bucket, cfg, sizeof cfg), TILE_OK);
    cr_assert_str_eq(cfg, forged[0]);

    /* end to end: C = A B with negative entries, no activation asked */
    enum { N = 32 };
    uint16_t ha[N * N], hb[N * N];
    float ref[N * N], out[N * N];
    for (int i = 0; i < N * N; i++) {
        ha[i] = f32_to_f16((i * 7 % 5) - 2.0f);
        hb[i] = f32_to_f16((i * 3 % 4) - 1.5f);
    }
    int negatives = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += f16_to_d(ha[i * N + k]) * f16_to_d(hb[k * N + j]);
            ref[i * N + j] = (float)s;
            negatives += s < 0;
        }
    cr_assert_gt(negatives, 0, "the test needs negative outputs");
    tile_devptr a, b, c;
    cr_assert_eq(tile_malloc(ctx, sizeof ha, &a), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof hb, &b), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &c), TILE_OK);
    tile_memcpy_htod(ctx, a, ha, sizeof ha);
    tile_memcpy_htod(ctx, b, hb, sizeof hb);
    tile_gemm_args g = {.m = N, .n = N, .k = N, .a = a, .lda = N, .b = b, .ldb = N, .c = c, .ldc = N, .in_dtype = TILE_F16,
                        .out_dtype = TILE_F32, .alpha = 1};
    cr_assert_eq(tile_gemm(ctx, &g), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK);
    tile_memcpy_dtoh(ctx, out, c, sizeof out);
    for (int i = 0; i < N * N; i++) cr_assert_float_eq(out[i], ref[i], 1e-3, "C[%d] = %g, want %g", i, out[i], ref[i]);
    tile_gemm_info gi;
    cr_assert_eq(tile_gemm_last_info(ctx, &gi), TILE_OK);
    cr_assert(gi.tuned && strstr(gi.config, "BM=64") && !strstr(gi.config, "ACT"), "%s", gi.config);
    /* the same through tile_tune_record, which compacts: a faster record outside the space does not push the good
     * one out (each key keeps its fastest configurations), so the lookup by source still falls back to it (probe X
     * B1: the compaction kept the fastest only, and the good record was lost for good) */
    cr_assert_eq(unlink(db), 0);
    const char *bucket2 = "m=128,n=128,k=128";
    cr_assert_eq(tile_tune_record(cache, id, dev, bucket2, good, 2.0), TILE_OK);
    cr_assert_eq(tile_tune_record(cache, id, dev, bucket2, forged[0], 1.0), TILE_OK);
    cr_assert_eq(tile_tune_record(cache, id, dev, bucket2, forged[1], 0.5), TILE_OK);
    capture_begin();
    st = tile_tune_lookup_file(cache, tile_gemm_source_path(), "gemm_f16_f32", dev, bucket2, cfg, sizeof cfg);
    free(capture_end());
    cr_assert_eq(st, TILE_OK);
    cr_assert_str_eq(cfg, good);
    cr_assert_eq(tile_tune_lookup(cache, id, dev, bucket2, cfg, sizeof cfg), TILE_OK);
    cr_assert_str_eq(cfg, forged[1], "by id, the fastest");
    tile_context_destroy(ctx);
}

/* Writes that fail leave the compile successful with one warning. */
static void compile_warns_once(const char *cache, const char *needle) {
    capture_begin();
    int hit1 = -1, hit2 = -1;
    tile_status st1 = compile_add(cache, &hit1), st2 = compile_add(cache, &hit2);
    char *err = capture_end();
    cr_assert_eq(st1, TILE_OK);
    cr_assert_eq(st2, TILE_OK);
    cr_assert_eq(hit1 + hit2, 0);
    cr_assert_eq(count(err, "tile: warning:"), 1, "%s", err);
    cr_assert(strstr(err, needle), "'%s' lacks '%s'", err, needle);
    free(err);
}

Test(cache_safety, folder_that_is_a_file, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], p[256], key[40];
    add_key(key);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    cr_assert_eq(mkdir(cache, 0700), 0);
    snprintf(p, sizeof p, "%s/v1", cache);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/v1/%.2s", cache, key);
    write_file(p, "");
    compile_warns_once(cache, "Not a directory");
}

Test(cache_safety, read_only_folder, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], cmd[2048], out[8192], log[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(log, sizeof log, "%s/ro.log", dir);
    cr_assert_eq(mkdir(cache, 0700), 0);
    /* in a mount namespace: the folder bound read-only over itself, then two compiles */
    snprintf(cmd, sizeof cmd,
             "unshare -m sh -c 'mount --bind %s %s && mount -o remount,bind,ro %s || exit 99; "
             "for i in 1 2; do TILE_CACHE_DIR=%s %s compile %s -o /dev/null -v || exit 1; done' > %s 2>&1",
             cache, cache, cache, cache, TILE_CLI, ADD, log);
    int rc = system(cmd);
    char *s = slurp(log);
    snprintf(out, sizeof out, "%s", s);
    free(s);
    if (!WIFEXITED(rc) || WEXITSTATUS(rc) == 99 || (WEXITSTATUS(rc) != 0 && strstr(out, "unshare")))
        cr_skip("no read-only bind mount here (unshare -m, mount): %s", out);
    cr_assert_eq(WEXITSTATUS(rc), 0, "%s", out);
    cr_assert_eq(count(out, "cache: miss"), 2, "%s", out);
    cr_assert_eq(count(out, "tile: warning:"), 2, "one per process: %s", out);
    cr_assert_eq(count(out, "Read-only file system"), 2, "%s", out);
    cr_assert_eq(entries_in(cache), 0);
}

/* No permission: a forked child as another user whose own folder is 0500. */
Test(cache_safety, folder_without_write_permission, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    cr_assert_eq(mkdir(cache, 0500), 0);
    if (geteuid() != 0 || chown(cache, NOBODY, NOBODY) != 0 || chmod(dir, 0755) != 0)
        cr_skip("needs root to act as another user whose folder is read-only (root ignores modes)");
    snprintf(cap_path, sizeof cap_path, "%s/stderr", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open(cap_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || fchown(fd, NOBODY, NOBODY) != 0 || dup2(fd, 2) < 0) _exit(10);
        if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0) _exit(11);
        tile_compiled c;
        int hit = -1, bad = 0;
        const char *src = "kernel k(x: *f32) { store(x + arange(0, 32), 1.0); }\n";
        for (int i = 0; i < 2; i++) {
            bad |= tile_cache_compile_source(cache, "k.tile", src, NULL, &c, &hit) != TILE_OK || hit != 0;
            tile_compiled_free(&c);
        }
        _exit(bad);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    char *err = slurp(cap_path);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %x: %s", status, err);
    cr_assert_eq(count(err, "tile: warning:"), 1, "%s", err);
    cr_assert(strstr(err, "Permission denied"), "%s", err);
    free(err);
}

/* A tuning record that cannot be written says why in tile_last_error(NULL), also after the once-per-process
 * warning was spent (there was no message: `tile tune` printed "(i/o error)").  As another user whose own
 * folder is 0500, which holds a tune.db it may read. */
Test(cache_safety, tune_record_that_cannot_be_written_says_why, .init = setup, .fini = teardown, .timeout = 20) {
    char cache[128], db[256];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    cr_assert_eq(mkdir(cache, 0700), 0);
    snprintf(db, sizeof db, "%s/tune.db", cache);
    write_file(db, "# hand-written\n"); /* no newline missing: the record would be appended */
    if (geteuid() != 0 || chown(cache, NOBODY, NOBODY) != 0 || chown(db, NOBODY, NOBODY) != 0 || chmod(db, 0400) != 0 ||
        chmod(cache, 0500) != 0 || chmod(dir, 0755) != 0)
        cr_skip("needs root to act as another user whose folder is read-only (root ignores modes)");
    snprintf(cap_path, sizeof cap_path, "%s/stderr", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open(cap_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || fchown(fd, NOBODY, NOBODY) != 0 || dup2(fd, 2) < 0) _exit(10);
        if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0) _exit(11);
        const char *id = "0123456789abcdef0123456789abcdef";
        for (int i = 0; i < 2; i++) {
            if (tile_tune_record(cache, id, "emu/sm_80", "n=1024", "BLOCK=256", 1e-3) != TILE_ERROR_IO) _exit(12);
            const char *why = tile_last_error(NULL);
            fprintf(stderr, "[%s]\n", why);
            if (!strstr(why, "tile_tune_record: cannot write") || !strstr(why, "tune.db: Permission denied")) _exit(13);
        }
        _exit(0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    char *err = slurp(cap_path);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %x: %s", status, err);
    cr_assert_eq(count(err, "tile: warning:"), 1, "%s", err);
    free(err);
}

/* Past the file-size limit (ulimit -f) the write fails with EFBIG instead
 * of SIGXFSZ killing the process: a forked child with RLIMIT_FSIZE 1 KiB. */
Test(cache_safety, file_size_limit, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(cap_path, sizeof cap_path, "%s/stderr", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open(cap_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(10);
        struct rlimit rl = {1024, 1024};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(11);
        int bad = 0;
        for (int i = 0; i < 2; i++) {
            int hit = -1;
            bad |= compile_add(cache, &hit) != TILE_OK || hit != 0;
        }
        _exit(bad);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    char *err = slurp(cap_path);
    cr_assert(!WIFSIGNALED(status), "the compile was killed by signal %d", WTERMSIG(status));
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit %d: %s", WEXITSTATUS(status), err);
    cr_assert_eq(count(err, "tile: warning:"), 1, "%s", err);
    cr_assert(strstr(err, "file-size limit"), "%s", err);
    free(err);
    tile_cache_stats s;
    cr_assert_eq(tile_cache_get_stats(cache, &s), TILE_OK);
    cr_assert_eq(s.entries, 0);
    cr_assert_eq(s.misses, 2, "stats still counted");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "find %s -name '.tmp-*' | grep -q .", cache);
    cr_assert_neq(system(cmd), 0, "a temporary file was left behind");
}

/* A tune.db that is a folder, a FIFO or a symlink is read as no database, with a message that says which
 * (it said "Invalid argument" and "Too many levels of symbolic links"), one warning; the FIFO does not block. */
Test(cache_safety, tune_db_that_is_no_file, .init = setup, .fini = teardown, .timeout = 20) {
    char cache[128], db[256], cfg[256];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    cr_assert_eq(mkdir(cache, 0700), 0);
    snprintf(db, sizeof db, "%s/tune.db", cache);
    const char *id = "0123456789abcdef0123456789abcdef";
    for (int kind = 0; kind < 3; kind++) {
        cr_assert_eq(kind == 0 ? mkdir(db, 0700) : kind == 1 ? mkfifo(db, 0600) : symlink("/etc/hostname", db), 0);
        capture_begin();
        tile_status st = tile_tune_lookup(cache, id, "emu/sm_80", "n=1024", cfg, sizeof cfg);
        char *err = capture_end();
        const char *why = kind < 2 ? "tune.db (it is not a regular file)" : "tune.db (it is a symbolic link (not followed))";
        cr_assert_eq(st, TILE_ERROR_NOT_FOUND);
        cr_assert(strstr(tile_last_error(NULL), why), "%s", tile_last_error(NULL));
        /* the warning once per process: at the first */
        cr_assert_eq(count(err, "tile: warning:"), kind == 0, "%s", err);
        cr_assert(kind > 0 || strstr(err, why), "%s", err);
        free(err);
        cr_assert_eq(kind == 0 ? rmdir(db) : unlink(db), 0);
    }
}

/* A stats file that is not the counters (here "hhh" then a 1 GiB hole of zero bytes) counts nothing and is read
 * no further than the piece that shows it (`tile cache stats` read all of it: minutes for a 10 GiB one, and
 * counted its 'h' bytes); `cache clear` keeps it, as any file that is not the cache's. */
Test(cache_safety, stats_that_is_no_counters_is_not_read_through, .init = setup, .fini = teardown, .timeout = 60) {
    char cache[128], p[256];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    cr_assert_eq(mkdir(cache, 0700), 0);
    int hit;
    cr_assert_eq(compile_add(cache, &hit), TILE_OK);
    snprintf(p, sizeof p, "%s/stats", cache);
    write_file(p, "hhh");
    cr_assert_eq(truncate(p, (off_t)1 << 30), 0);
    tile_cache_stats s;
    cr_assert_eq(tile_cache_get_stats(cache, &s), TILE_OK);
    cr_assert_eq(s.hits, 0);
    cr_assert_eq(s.misses, 0);
    cr_assert_eq(s.entries, 1);
    cr_assert_eq(tile_cache_clear(cache, 0), TILE_OK);
    cr_assert_eq(file_size(p), (off_t)1 << 30, "a stats file that is not the counters was removed");
    cr_assert_eq(tile_cache_get_stats(cache, &s), TILE_OK);
    cr_assert_eq(s.entries, 0);
}
