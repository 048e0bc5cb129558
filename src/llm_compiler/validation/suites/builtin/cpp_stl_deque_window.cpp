// exercises: std::deque as a monotonic double-ended queue, push_back, pop_back, pop_front, front, back, indexing, std::deque as a BFS queue, std::array grids, fixed-seed LCG data
// Computes sliding-window maxima over LCG data with a monotonic deque and the BFS shortest path through an LCG-generated 12x12 grid.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static std::uint32_t lcg(std::uint32_t& x) { x = (x * 1103515245u + 12345u) & 0x7fffffffu; return x; }

// Sum of the maxima of all windows of size k; also reports the smallest window maximum.
static long long windowMaxSum(const std::array<int, 200>& a, int k, int& count, int& smallest) {
    std::deque<int> idx;
    long long sum = 0;
    count = 0;
    smallest = 1 << 30;
    for (int i = 0; i < static_cast<int>(a.size()); ++i) {
        while (!idx.empty() && a[static_cast<std::size_t>(idx.back())] <= a[static_cast<std::size_t>(i)]) idx.pop_back();
        idx.push_back(i);
        if (idx.front() <= i - k) idx.pop_front();
        if (i >= k - 1) {
            int m = a[static_cast<std::size_t>(idx.front())];
            sum += m;
            ++count;
            if (m < smallest) smallest = m;
        }
    }
    return sum;
}

constexpr int N = 12;

static int shortestPath(const std::array<std::array<int, N>, N>& blocked, int& reached) {
    int dist[N][N];
    for (auto& row : dist)
        for (int& d : row) d = -1;
    std::deque<int> queue;
    dist[0][0] = 0;
    queue.push_back(0);
    reached = 1;
    const int dr[4] = {1, -1, 0, 0}, dc[4] = {0, 0, 1, -1};
    while (!queue.empty()) {
        int cell = queue.front();
        queue.pop_front();
        int r = cell / N, c = cell % N;
        for (int d = 0; d < 4; ++d) {
            int nr = r + dr[d], nc = c + dc[d];
            if (nr < 0 || nr >= N || nc < 0 || nc >= N || blocked[nr][nc] != 0 || dist[nr][nc] >= 0) continue;
            dist[nr][nc] = dist[r][c] + 1;
            ++reached;
            queue.push_back(nr * N + nc);
        }
    }
    return dist[N - 1][N - 1];
}

int main() {
    volatile std::uint32_t seedA = 99, seedB = 7;
    std::uint32_t x = seedA;
    std::array<int, 200> a;
    for (int& v : a) v = static_cast<int>((lcg(x) >> 10) % 1000u);
    int windows = 0, smallest = 0;
    long long sum = windowMaxSum(a, 10, windows, smallest);
    CHECK(windows == 191);
    CHECK(sum == 173013 && smallest == 400);

    std::uint32_t y = seedB;
    std::array<std::array<int, N>, N> grid;
    int walls = 0;
    for (auto& row : grid)
        for (int& cell : row) { cell = ((lcg(y) >> 12) % 4u == 0) ? 1 : 0; walls += cell; }
    walls -= grid[0][0] + grid[N - 1][N - 1];
    grid[0][0] = grid[N - 1][N - 1] = 0;
    CHECK(walls == 34 && grid[0][1] == 1);
    int reached = 0;
    int path = shortestPath(grid, reached);
    CHECK(path == 24 && reached == 110);

    std::deque<int> ring;
    for (int i = 0; i < 10; ++i) ring.push_back(i);
    for (int i = 0; i < 3; ++i) { int f = ring.front(); ring.pop_front(); ring.push_back(f); }
    CHECK(ring.front() == 3 && ring.back() == 2 && ring.size() == 10 && ring[4] == 7);

    long long checksum = path * 1000000LL + sum + reached + smallest + ring[4];
    CHECK(checksum == 24173530);
    std::printf("cpp_stl_deque_window: %lld\n", checksum);
    return 0;
}
