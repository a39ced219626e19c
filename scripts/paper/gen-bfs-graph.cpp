// Random graph in Rodinia's bfs input format (the format bfs.cu's BFSGraph() reads):
//
//   <no_of_nodes>
//   <starting> <no_of_edges>        one line per node; edges of node i are
//   ...                             edge_list[starting .. starting+no_of_edges)
//   <source>                        (bfs.cu reads it, then uses 0 anyway)
//   <edge_list_size>
//   <dest_id> <cost>                one line per edge (bfs.cu ignores cost)
//
// Same scheme as Rodinia's data/bfs/inputGen/graphgen: every node draws 2..4 random
// neighbours, each edge is stored in both directions (mean degree ~6), cost 1..10.
// No GPU-Sched or Rodinia copy of graph32M.txt / graphgen exists in the repository,
// so this is a re-implementation, deterministic for a given seed.
//
// Build: g++ -O2 -o gen-bfs-graph gen-bfs-graph.cpp
// Use:   ./gen-bfs-graph 33554432 graph32M.txt [seed]     (2^25 nodes = "graph32M", ~2.2 GB)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static uint64_t rng_state;
static inline uint64_t next_rand() {  // splitmix64
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static const int MIN_EDGES = 2, MAX_INIT_EDGES = 4, MIN_WEIGHT = 1, MAX_WEIGHT = 10;

struct Out {
  FILE *f;
  std::vector<char> buf;
  size_t n = 0;
  explicit Out(FILE *f) : f(f), buf(1 << 22) {}
  void flush() {
    if (n && fwrite(buf.data(), 1, n, f) != n) { perror("write"); exit(1); }
    n = 0;
  }
  void num(uint64_t v) {
    char tmp[24]; int k = 0;
    do { tmp[k++] = char('0' + v % 10); v /= 10; } while (v);
    if (n + k + 2 > buf.size()) flush();
    while (k) buf[n++] = tmp[--k];
  }
  void ch(char c) { if (n + 1 > buf.size()) flush(); buf[n++] = c; }
};

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s <num_nodes> <output_file> [seed]\n", argv[0]);
    return 2;
  }
  char *end;
  unsigned long long nn = strtoull(argv[1], &end, 10);
  if (*end || nn < 2 || nn > 0x7fffffffULL) {
    fprintf(stderr, "num_nodes must be an integer in [2, 2^31-1] (bfs.cu reads it as int)\n");
    return 2;
  }
  uint32_t n = (uint32_t)nn;
  uint64_t seed = argc == 4 ? strtoull(argv[3], nullptr, 10) : 7;

  // pass 1: degrees
  std::vector<uint32_t> deg(n, 0);
  rng_state = seed;
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; i++) {
    int k = MIN_EDGES + (int)(next_rand() % (MAX_INIT_EDGES - MIN_EDGES + 1));
    for (int j = 0; j < k; j++) {
      uint32_t dst = (uint32_t)(next_rand() % n);
      (void)next_rand();  // weight
      deg[i]++; deg[dst]++; total += 2;
    }
  }
  if (total > 0x7fffffffULL) { fprintf(stderr, "too many edges for bfs.cu's int edge_list_size\n"); return 2; }
  std::vector<uint32_t> start(n);
  uint64_t s = 0;
  for (uint32_t i = 0; i < n; i++) { start[i] = (uint32_t)s; s += deg[i]; }

  // pass 2: same random sequence, fill the adjacency lists
  std::vector<uint32_t> dst_of(total);
  std::vector<uint8_t> w_of(total);
  std::vector<uint32_t> fill(start);
  rng_state = seed;
  for (uint32_t i = 0; i < n; i++) {
    int k = MIN_EDGES + (int)(next_rand() % (MAX_INIT_EDGES - MIN_EDGES + 1));
    for (int j = 0; j < k; j++) {
      uint32_t d = (uint32_t)(next_rand() % n);
      uint8_t w = (uint8_t)(MIN_WEIGHT + next_rand() % (MAX_WEIGHT - MIN_WEIGHT + 1));
      dst_of[fill[i]] = d; w_of[fill[i]++] = w;
      dst_of[fill[d]] = i; w_of[fill[d]++] = w;
    }
  }

  FILE *f = fopen(argv[2], "wb");
  if (!f) { perror(argv[2]); return 1; }
  Out o(f);
  o.num(n); o.ch('\n');
  for (uint32_t i = 0; i < n; i++) { o.num(start[i]); o.ch(' '); o.num(deg[i]); o.ch('\n'); }
  o.ch('\n'); o.num(0); o.ch('\n'); o.ch('\n');  // source node
  o.num(total); o.ch('\n');
  for (uint64_t e = 0; e < total; e++) { o.num(dst_of[e]); o.ch(' '); o.num(w_of[e]); o.ch('\n'); }
  o.flush();
  if (fclose(f) != 0) { perror("close"); return 1; }
  fprintf(stderr, "wrote %s: %u nodes, %llu edges\n", argv[2], n, (unsigned long long)total);
  return 0;
}
