/* hashmap.h - a u64 -> u64 hash map for keys that come from input (pointers
 * in a trace): open addressing, linear probing, backward-shift deletion,
 * grown at 3/4 full.  Slots are chosen by SipHash-1-3 under a per-map
 * 128-bit key (random unless the caller gives one), so no set of keys
 * chosen in advance can make the probes quadratic.  Any u64 is a key, 0
 * included.  Single-threaded; nothing iterates it, so no result of ours
 * depends on the hash key.  Functions return 0 or -errno. */
#ifndef MB_HASHMAP_H
#define MB_HASHMAP_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t *key, *val;        /* key 0: an empty slot */
    size_t cap, n;              /* slots (a power of two, or 0), entries */
    uint64_t k0, k1;            /* the hash key */
    int has_zero;               /* key 0 lives outside the slots */
    uint64_t zero_val;
    uint64_t probes;            /* slots visited by put, del and growth (tests) */
} hmap_t;

/* An empty map (no allocation until the first put) hashing under key[2],
 * or under a random key when key is NULL. */
void hmap_init(hmap_t *m, const uint64_t *key);
void hmap_free(hmap_t *m);
/* Removes every entry, keeps the slots and the hash key. */
void hmap_clear(hmap_t *m);
/* The value of k (valid until the next put or del), or NULL. */
uint64_t *hmap_get(const hmap_t *m, uint64_t k);
/* Maps k to v, replacing any value it had: 0 or -ENOMEM (the map unchanged). */
int hmap_put(hmap_t *m, uint64_t k, uint64_t v);
/* Removes k, its value in *v when v is not NULL: 0, or -ENOENT. */
int hmap_del(hmap_t *m, uint64_t k, uint64_t *v);
/* Entries in the map. */
size_t hmap_count(const hmap_t *m);

/* A fixed (unkeyed) 64-bit finalizer (MurmurHash3's fmix64): a bijection,
 * for checksums that must be the same in every run.  Never for choosing
 * slots of input keys: it is easily inverted. */
uint64_t hmap_mix64(uint64_t x);

#endif
