/* A growable array's one growth step: when the array is full, its capacity
 * doubles (from `first` when it is 0) through realloc.
 *
 *   if (v->n == v->cap) {
 *       T *p = qsf_grow(v->items, &v->cap, 16);   // cap: uint32_t, int or size_t
 *       if (!p)
 *           return QSF_E_NOMEM;                    // v->items and v->cap untouched
 *       v->items = p;                              // v->cap is the new capacity
 *   }
 *
 * NULL when realloc fails, or when the doubled capacity would not fit the
 * capacity's type or its byte size would not fit a size_t: the array and the
 * capacity are then as they were, and the caller reports out of memory as it
 * does for a failed realloc. */
#ifndef QSF_GROW_H
#define QSF_GROW_H

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

/* The array of `elem`-byte elements at arr, of capacity cap, reallocated to
 * the next capacity (*next); NULL as above. */
static inline void *qsf_grow_step(void *arr, size_t elem, size_t cap, size_t first, size_t max,
                                  size_t *next) {
    if (cap > max / 2)
        return NULL;
    size_t n = cap ? cap * 2 : first;
    if (n > SIZE_MAX / elem)
        return NULL;
    void *p = realloc(arr, n * elem);
    if (p)
        *next = n;
    return p;
}

/* The step for one capacity type T of at most MAX (a negative int capacity
 * reads as above any MAX, so it is refused too). */
#define QSF_GROW_FOR(name, T, MAX)                                                                 \
    static inline void *name(void *arr, size_t elem, T *cap, size_t first) {                       \
        size_t n;                                                                                  \
        void *p = qsf_grow_step(arr, elem, (size_t) *cap, first, (MAX), &n);                       \
        if (p)                                                                                     \
            *cap = (T) n;                                                                          \
        return p;                                                                                  \
    }

QSF_GROW_FOR(qsf_grow_u32, uint32_t, UINT32_MAX)
QSF_GROW_FOR(qsf_grow_int, int, INT_MAX)
QSF_GROW_FOR(qsf_grow_size, size_t, SIZE_MAX)

/* qsf_grow(arr, capp, first): arr an array of any element type, capp a
 * pointer to its capacity. */
#define qsf_grow(arr, capp, first)                                                                 \
    _Generic((capp), uint32_t *: qsf_grow_u32, int *: qsf_grow_int, size_t *: qsf_grow_size)(     \
        (arr), sizeof *(arr), (capp), (first))

#endif
