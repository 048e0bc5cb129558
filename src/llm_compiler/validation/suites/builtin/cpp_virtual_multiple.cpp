// exercises: multiple interface inheritance, cross-casting with dynamic_cast, base subobject pointer adjustment, virtual inheritance diamond, deletion through a secondary base
// Pumps integers between readers and writers that implement one or both of two pure virtual interfaces and checks totals and cast results.
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static int destroyed = 0;

class Readable {
public:
    virtual ~Readable() = default;
    virtual bool read(int& out) = 0;
};

class Writable {
public:
    virtual ~Writable() = default;
    virtual bool write(int v) = 0;
};

class RingBuffer final : public Readable, public Writable {
public:
    ~RingBuffer() override { ++destroyed; }
    bool read(int& out) override {
        if (size_ == 0) return false;
        out = buf_[head_];
        head_ = (head_ + 1) % 8;
        --size_;
        return true;
    }
    bool write(int v) override {
        if (size_ == 8) return false;
        buf_[(head_ + size_) % 8] = v;
        ++size_;
        return true;
    }
    int size() const { return size_; }
private:
    int buf_[8] = {};
    int head_ = 0, size_ = 0;
};

class Counter final : public Readable {
public:
    explicit Counter(int limit) : limit_(limit) {}
    bool read(int& out) override { if (next_ > limit_) return false; out = next_++; return true; }
private:
    int limit_, next_ = 1;
};

class Sink final : public Writable {
public:
    bool write(int v) override { sum += v; ++count; return true; }
    int sum = 0, count = 0;
};

// Moves values until the reader is empty or the writer refuses; a refused value is kept pending.
static int pump(Readable& r, Writable& w, int& pending) {
    int moved = 0, v = 0;
    while (pending != 0 || r.read(v)) {
        if (pending != 0) { v = pending; pending = 0; }
        if (!w.write(v)) { pending = v; break; }
        ++moved;
    }
    return moved;
}

struct Device { int opens = 0; };
struct Input : virtual Device { void openIn() { ++opens; } };
struct Output : virtual Device { void openOut() { ++opens; } };
struct Terminal : Input, Output {};

int main() {
    volatile int limit = 10;
    Counter counter(limit);
    RingBuffer ring;
    Sink sink;
    int pending = 0;
    CHECK(pump(counter, ring, pending) == 8);
    CHECK(ring.size() == 8 && pending == 9);
    int none = 0;
    CHECK(pump(ring, sink, none) == 8 && sink.sum == 36);
    CHECK(pump(counter, ring, pending) == 2 && pending == 0);
    CHECK(pump(ring, sink, none) == 2 && sink.sum == 55 && sink.count == 10);

    Readable* asReader = &ring;
    Writable* asWriter = &ring;
    CHECK(static_cast<void*>(asReader) != static_cast<void*>(asWriter));
    CHECK(dynamic_cast<void*>(asReader) == static_cast<void*>(&ring));
    CHECK(dynamic_cast<void*>(asWriter) == static_cast<void*>(&ring));
    CHECK(dynamic_cast<Writable*>(asReader) == asWriter);
    Readable* counterReader = &counter;
    CHECK(dynamic_cast<Writable*>(counterReader) == nullptr);

    Writable* heap = new RingBuffer();
    CHECK(heap->write(5) && dynamic_cast<RingBuffer*>(heap)->size() == 1);
    delete heap;
    CHECK(destroyed == 1);

    Terminal t;
    t.openIn();
    t.openOut();
    Input& in = t;
    Output& out = t;
    CHECK(t.opens == 2 && &static_cast<Device&>(in) == &static_cast<Device&>(out));

    int checksum = t.opens * 100000 + sink.sum * 100 + sink.count;
    CHECK(checksum == 205510);
    std::printf("cpp_virtual_multiple: %d\n", checksum);
    return 0;
}
