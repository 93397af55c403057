/* addr entries (docs/CONFIGURATION.md, "Addresses"):
 *
 *   entry := host [ ":" port ]
 *   host  := DNS name | IPv4 literal | "[" IPv6 literal [ "%" zone ] "]"
 *   port  := decimal 1..65535, default 9000 for ws and wss
 *
 * One addr value holds comma-separated entries; repeated addr= keys accumulate in
 * order (the failover preference order). Duplicates are found through a hash
 * index keyed by (lower-case host, port), so a string with many entries parses
 * in linear time.
 */
#include "conf/impl.h"
#include "err.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct entry {
    const char *s; /* the entry text inside the value */
    size_t n;
    size_t pos; /* byte position in the connect string */
};

static int entry_error(qsf_errinfo *err, const struct entry *e, const char *reason) {
    const struct qsf_conf_keydesc *d = &qsf_conf_keys[QSF_CONF_KEY_addr];
    return qsf_conf_value_error(err, d, "addr", e->s, e->n, e->pos, "%s", reason);
}

static bool is_host_char(unsigned char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '.' || ch == '_';
}

static int parse_port(const struct entry *e, const char *p, size_t n, int *port, qsf_errinfo *err) {
    long v = 0;
    if (n == 0)
        return entry_error(err, e, "has an empty port (expected 1..65535)");
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return entry_error(err, e, "has a port that is not a decimal number");
        v = v * 10 + (p[i] - '0');
        if (v > 65535)
            break;
    }
    if (v < 1 || v > 65535)
        return entry_error(err, e, "has a port outside 1..65535");
    *port = (int) v;
    return QSF_OK;
}

/* The optional ":port" after the host; `rest` points just past the host. */
static int parse_tail(const struct entry *e, const char *rest, struct qsf_addr *a,
                      qsf_errinfo *err) {
    size_t left = e->n - (size_t) (rest - e->s);
    a->port = QSF_CONF_DEFAULT_PORT;
    if (left == 0)
        return QSF_OK;
    if (rest[0] != ':')
        return entry_error(err, e, "has unexpected text after the host (expected :port)");
    return parse_port(e, rest + 1, left - 1, &a->port, err);
}

static bool zone_ok(const char *z, size_t n) {
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_host_char((unsigned char) z[i]))
            return false;
    return true;
}

static int parse_ipv6(const struct entry *e, struct qsf_addr *a, qsf_errinfo *err) {
    const char *close = memchr(e->s, ']', e->n);
    if (!close)
        return entry_error(err, e, "has an unclosed '[' (expected [IPv6]:port)");
    size_t n = (size_t) (close - e->s - 1);
    const char *pct = memchr(e->s + 1, '%', n);
    size_t ip_n = pct ? (size_t) (pct - e->s - 1) : n;
    char ip[INET6_ADDRSTRLEN + 1];
    unsigned char bin[16];
    if (ip_n == 0 || ip_n > INET6_ADDRSTRLEN)
        return entry_error(err, e, "is not a valid IPv6 literal");
    memcpy(ip, e->s + 1, ip_n);
    ip[ip_n] = '\0';
    if (inet_pton(AF_INET6, ip, bin) != 1)
        return entry_error(err, e, "is not a valid IPv6 literal");
    if (n >= sizeof a->host)
        return entry_error(err, e, "has a host longer than 255 bytes");
    if (pct && !zone_ok(pct + 1, n - ip_n - 1))
        return entry_error(err, e, "has an invalid IPv6 zone (expected [addr%zone])");
    memcpy(a->host, e->s + 1, n);
    a->host[n] = '\0';
    a->ipv6 = true;
    return parse_tail(e, close + 1, a, err);
}

static bool looks_ipv4(const char *h, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(h[i] == '.' || (h[i] >= '0' && h[i] <= '9')))
            return false;
    return true;
}

static int parse_host(const struct entry *e, struct qsf_addr *a, qsf_errinfo *err) {
    const char *colon = memchr(e->s, ':', e->n);
    if (colon && memchr(colon + 1, ':', e->n - (size_t) (colon - e->s) - 1))
        return entry_error(err, e, "is an IPv6 literal without brackets (write [addr]:port)");
    size_t n = colon ? (size_t) (colon - e->s) : e->n;
    if (n == 0)
        return entry_error(err, e, "has an empty host");
    if (n >= sizeof a->host)
        return entry_error(err, e, "has a host longer than 255 bytes");
    for (size_t i = 0; i < n; i++)
        if (!is_host_char((unsigned char) e->s[i]))
            return entry_error(err, e,
                               "has an invalid character in the host (a DNS name, an IPv4 "
                               "literal or [IPv6])");
    memcpy(a->host, e->s, n);
    a->host[n] = '\0';
    unsigned char bin[4];
    if (looks_ipv4(a->host, n) && inet_pton(AF_INET, a->host, bin) != 1)
        return entry_error(err, e, "is not a valid IPv4 address");
    a->ipv6 = false;
    return parse_tail(e, e->s + n, a, err);
}

static int parse_entry(const struct entry *e, struct qsf_addr *a, qsf_errinfo *err) {
    memset(a, 0, sizeof *a);
    if (e->n == 0)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "addr: empty addr entry at position %zu (a leading, trailing or "
                           "doubled comma)",
                           e->pos);
    if (e->s[0] == '[')
        return parse_ipv6(e, a, err);
    return parse_host(e, a, err);
}

static uint64_t addr_hash(const struct qsf_addr *a) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *p = a->host; *p; p++) {
        unsigned char ch = (unsigned char) *p;
        h = (h ^ (unsigned char) (ch >= 'A' && ch <= 'Z' ? ch + 32 : ch)) * 1099511628211ULL;
    }
    h ^= (uint64_t) a->port;
    /* FNV's low bits mix poorly and the index masks low bits: finish with a
     * full-avalanche step (the MurmurHash3 64-bit finalizer constants) */
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdULL;
    h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static bool addr_same(const struct qsf_addr *a, const struct qsf_addr *b) {
    return a->port == b->port && strcasecmp(a->host, b->host) == 0;
}

/* Finds the slot of `a` (an equal entry or an empty slot); cap is a power of 2. */
static size_t index_probe(const struct qsf_addr_index *ix, const struct qsf_addr *addrs,
                          const struct qsf_addr *a, uint64_t h) {
    size_t i = (size_t) h & (ix->cap - 1);
    for (const struct qsf_addr_slot *s; (s = &ix->slots[i])->idx; i = (i + 1) & (ix->cap - 1))
        if (s->hash == h && addr_same(&addrs[s->idx - 1], a))
            break;
    return i;
}

/* Rehashes into twice the room; the stored hashes make this touch no entry. */
static int index_grow(struct qsf_addr_index *ix, size_t want) {
    size_t cap = ix->cap ? ix->cap : 16;
    while (cap < want * 2)
        cap *= 2;
    struct qsf_addr_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return QSF_E_NOMEM;
    for (size_t i = 0; i < ix->cap; i++) {
        if (!ix->slots[i].idx)
            continue;
        size_t j = (size_t) ix->slots[i].hash & (cap - 1);
        while (slots[j].idx)
            j = (j + 1) & (cap - 1);
        slots[j] = ix->slots[i];
    }
    free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
    return QSF_OK;
}

void qsf_addr_index_free(struct qsf_addr_index *ix) {
    free(ix->slots);
    ix->slots = NULL;
    ix->cap = 0;
}

/* Makes room for `more` entries in the list and the index at once, so a long
 * value costs one allocation per doubling and no per-entry growth checks. */
static int reserve(qsf_conf *c, struct qsf_addr_index *ix, size_t more, qsf_errinfo *err) {
    size_t want = c->n_addrs + more;
    if (want * 2 > ix->cap && index_grow(ix, want) != QSF_OK)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory parsing addr");
    if (want <= c->addr_cap)
        return QSF_OK;
    size_t cap = c->addr_cap ? c->addr_cap : 4;
    while (cap < want)
        cap *= 2;
    struct qsf_addr *grown = realloc(c->addrs, cap * sizeof *grown);
    if (!grown)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory parsing addr");
    c->addrs = grown;
    c->addr_cap = cap;
    return QSF_OK;
}

static int append_addr(qsf_conf *c, struct qsf_addr_index *ix, const struct entry *e,
                       qsf_errinfo *err) {
    struct qsf_addr *a = &c->addrs[c->n_addrs]; /* reserved */
    int rc = parse_entry(e, a, err);
    if (rc != QSF_OK)
        return rc;
    uint64_t h = addr_hash(a);
    size_t slot = index_probe(ix, c->addrs, a, h);
    if (ix->slots[slot].idx) {
        char text[300];
        struct qsf_sbuf b = {text, sizeof text, 0};
        qsf_conf_put_addr(&b, a);
        return qsf_err_set(err, QSF_E_CONF, 0, 0, "duplicate addr entry: %s at position %zu", text,
                           e->pos);
    }
    ix->slots[slot] = (struct qsf_addr_slot){h, ++c->n_addrs};
    return QSF_OK;
}

static size_t count_entries(const char *v, size_t n) {
    size_t k = 1;
    for (const char *p = v; (p = memchr(p, ',', n - (size_t) (p - v))); p++)
        k++;
    return k;
}

int qsf_conf_addr_add(qsf_conf *c, struct qsf_addr_index *ix, const char *v, size_t vlen,
                      size_t pos, qsf_errinfo *err) {
    int rc = reserve(c, ix, count_entries(v, vlen), err);
    for (size_t start = 0; rc == QSF_OK;) {
        const char *comma = memchr(v + start, ',', vlen - start);
        size_t end = comma ? (size_t) (comma - v) : vlen;
        struct entry e = {v + start, end - start, pos + start};
        rc = append_addr(c, ix, &e, err);
        if (!comma)
            break;
        start = end + 1;
    }
    return rc;
}
