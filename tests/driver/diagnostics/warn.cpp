// C++: an unused variable, a comparison of different signedness, a missing override.
struct Base {
    virtual ~Base() = default;
    virtual int size() const { return 0; }
};

struct Derived : Base {
    int size() const override { return 1; }
    virtual int more() const { return 2; }
};

int total(const Derived &d, unsigned limit) {
    int unused = 0;
    int n = d.size();
    return n < limit ? n : d.more();
}
