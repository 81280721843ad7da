/* The address planner's placement and the Node Simulation cache. */
#include "scheduler.h"
#include "unit.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* no two intervals alive together share an address; peak covers them; LOAD <= peak */
static bool placement_ok(const SchedInterval *iv, int n, int64_t align, int64_t peak, int64_t load) {
    for (int i = 0; i < n; i++) {
        if (iv[i].offset < 0 || (align > 1 && iv[i].offset % align) || iv[i].offset + iv[i].size > peak) return false;
        for (int j = i + 1; j < n; j++) {
            bool time = iv[i].start <= iv[j].end && iv[j].start <= iv[i].end;
            bool mem = iv[i].offset < iv[j].offset + iv[j].size && iv[j].offset < iv[i].offset + iv[i].size;
            if (time && mem) return false;
        }
    }
    return load <= peak;
}

void test_sched_place(void) {
    /* a chain of three, each overlapping the next: two slots suffice and LOAD says so */
    SchedInterval c[3] = {{0, 1, 4, 0}, {1, 2, 4, 0}, {2, 3, 4, 0}};
    int64_t load;
    const char *which;
    int64_t peak = sched_place(c, 3, 1, &load, &which);
    CHECK_EQ_I(load, 8);
    CHECK_EQ_I(peak, 8);
    CHECK(placement_ok(c, 3, 1, peak, load));
    CHECK(!strcmp(which, "greedy_by_size")); /* a tie goes to greedy by size */
    /* thousands of blocks living all the time: greedy by size would visit every pair in
     * each of 100 time buckets, past its budget, so the placement is best fit's */
    int nl = 2500;
    SchedInterval *lv = calloc((size_t)nl, sizeof *lv);
    for (int i = 0; i < nl; i++) lv[i] = (SchedInterval){0, 6399, 1 + i % 3, 0};
    peak = sched_place(lv, nl, 1, &load, &which);
    CHECK(!strcmp(which, "best_fit_by_start"));
    CHECK(placement_ok(lv, nl, 1, peak, load));
    CHECK_EQ_I(peak, load);
    free(lv);
    /* random lifetimes: always valid, and close to LOAD */
    uint64_t x = 12345;
    double worst = 1;
    for (int round = 0; round < 50; round++) {
        SchedInterval iv[200];
        int n = 20 + round * 3;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            int64_t s = (int64_t)(x >> 33) % 300, len = (int64_t)(x >> 20) % 40, size = 1 + (int64_t)(x >> 50) % 64;
            iv[i] = (SchedInterval){s, s + len, size, 0};
        }
        peak = sched_place(iv, n, 2, &load, &which);
        CHECK(placement_ok(iv, n, 2, peak, load));
        if ((double)peak / (double)load > worst) worst = (double)peak / (double)load;
    }
    CHECK(worst < 1.5);
}

void test_sim_cache(void) {
    char dir[128]; /* a fresh directory of this process (removed at the end) */
    snprintf(dir, sizeof dir, "/tmp/mncc_unit_cache_%ld", (long)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    SimCache sc = {dir, 0, 0, 0, 0};
    SimNode a = {0}, b;
    a.res = SIM_DRAM;
    a.nvar = 2;
    a.var[0] = (SimVariant){0, false, 100, 120, 30, 0};
    a.var[1] = (SimVariant){-1, true, 90, 95, 40, 8};
    const char *sig = "op Relu\nin0 FLOAT32 [4]\n";
    uint64_t key = sim_hash(sig, strlen(sig));
    CHECK(!sim_cache_get(&sc, sig, key, &b));
    sim_cache_put(&sc, sig, key, &a);
    CHECK(sim_cache_get(&sc, sig, key, &b));
    CHECK(b.res == a.res && b.nvar == 2 && b.var[1].out_bank == -1 && b.var[1].fast && b.var[1].temp_lw == 8 &&
          b.var[0].cycles_conflict == 120);
    /* another signature under the same key is a miss, not someone else's result */
    CHECK(!sim_cache_get(&sc, "op Sigmoid\n", key, &b));
    /* a changed figure fails the checksum */
    char path[512];
    snprintf(path, sizeof path, "%s/%02x/%016llx.json", dir, (unsigned)(key >> 56), (unsigned long long)key);
    FILE *f = fopen(path, "rb");
    char text[2048] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    char *p = strstr(text, "100");
    CHECK(p != NULL);
    if (p) p[0] = '7';
    f = fopen(path, "wb");
    if (f) fputs(text, f), fclose(f);
    int64_t corrupt = sc.corrupt;
    CHECK(!sim_cache_get(&sc, sig, key, &b));
    CHECK_EQ_I(sc.corrupt, corrupt + 1);
    unlink(path);
    snprintf(path, sizeof path, "%s/%02x", dir, (unsigned)(key >> 56));
    rmdir(path);
    rmdir(dir);
}
