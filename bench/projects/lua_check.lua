-- A self-contained check of a Lua 5.4 interpreter, for builds whose source has no test
-- suite. Each section prints what it computed; the benchmark compares the whole output
-- with lua_check.expected, so any wrong result (or an early stop) fails the check.
-- The output depends on nothing but the interpreter: no paths, addresses, times or
-- pairs() order.

local function show(label, ...)
  local parts = {}
  for i = 1, select("#", ...) do
    parts[#parts + 1] = tostring((select(i, ...)))
  end
  print(label .. ": " .. table.concat(parts, " "))
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

-- Strings ---------------------------------------------------------------------------
do
  local s = "Hello, Lua World"
  show("len upper lower", #s, s:upper(), s:lower())
  show("sub", s:sub(1, 5), s:sub(-5), s:sub(8, -7))
  show("find", s:find("Lua"), s:find("o", 6), s:find("%u%l+$"), s:find("x"))
  show("match", s:match("(%a+), (%a+)"), ("key = value"):match("^(%w+)%s*=%s*(%w+)$"))
  show("gsub", s:gsub("o", "0"), ("abc"):gsub("%w", "%0%0"), ("hello world"):gsub("(%w+)", string.upper))
  local words = {}
  for w in ("the quick brown fox"):gmatch("%a+") do words[#words + 1] = w:reverse() end
  show("gmatch reverse", table.concat(words, ","))
  show("byte char rep", s:byte(1, 3), string.char(76, 117, 97), ("ab"):rep(3, "-"))
  show("format d f x", string.format("%d|%5.2f|%x|%X|%o|%5d|%-5d|%05d", 42, math.pi, 255, 255, 8, 7, 7, 7))
  show("format s q", string.format("%s|%10s|%-10s|%q", "a", "right", "left", 'quote "me"\n'))
  show("format g e c i", string.format("%g|%g|%.3e|%c|%i|%.14g", 1e20, 0.1, 12345.678, 65, -3, 2 ^ 0.5))
  show("pack", string.unpack("<i4", string.pack("<i4", -2)), #string.pack("z", "abc"), string.pack(">I2", 258):byte(1, -1))
  show("utf8", utf8.char(72, 233, 8364), utf8.len("h\u{e9}\u{20ac}"), utf8.codepoint("\u{20ac}"))
  show("tostring tonumber", tostring(10), tonumber("0x1F"), tonumber("  12  "), tonumber("z", 36), tonumber("1e2"), tonumber("abc"))
  show("concat coercion", 1 .. 2, "10" + 5, "3" * "4", 10 .. "")
end

-- Tables ----------------------------------------------------------------------------
do
  local t = {10, 20, 30}
  table.insert(t, 40)
  table.insert(t, 1, 5)
  show("insert", table.concat(t, " "), #t)
  show("remove", table.remove(t), table.remove(t, 1), table.concat(t, " "))
  show("unpack move", table.unpack(table.move({1, 2, 3}, 1, 3, 2, {9})))
  local seed = 12345
  local function rand()
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed
  end
  local nums = {}
  for i = 1, 200 do nums[i] = rand() % 1000 end
  table.sort(nums)
  local ok = true
  for i = 2, #nums do ok = ok and nums[i - 1] <= nums[i] end
  show("sort", ok, nums[1], nums[100], nums[200])
  table.sort(nums, function(a, b) return a > b end)
  show("sort desc", nums[1], nums[200])
  local people = {{name = "bo", age = 31}, {name = "al", age = 25}, {name = "cy", age = 31}}
  table.sort(people, function(a, b)
    if a.age ~= b.age then return a.age < b.age end
    return a.name < b.name
  end)
  local names = {}
  for _, p in ipairs(people) do names[#names + 1] = p.name .. "=" .. p.age end
  show("sort records", table.concat(names, ","))
  local h = {alpha = 1, beta = 2, [3] = "three", [true] = "yes"}
  local keys = sorted_keys(h)
  for i, k in ipairs(keys) do keys[i] = tostring(k) .. "=" .. tostring(h[k]) end
  show("hash", table.concat(keys, ","))
  local counts = {}
  for c in ("mississippi"):gmatch(".") do counts[c] = (counts[c] or 0) + 1 end
  local out = {}
  for _, k in ipairs(sorted_keys(counts)) do out[#out + 1] = k .. counts[k] end
  show("counts", table.concat(out))
  local grid = {}
  for i = 1, 3 do
    grid[i] = {}
    for j = 1, 3 do grid[i][j] = i * j end
  end
  show("nested", grid[2][3], grid[3][3], #grid, select("#", table.unpack(grid[1])))
end

-- Closures --------------------------------------------------------------------------
do
  local function counter(start)
    local n = start
    return function(step) n = n + (step or 1); return n end, function() return n end
  end
  local inc, get = counter(10)
  inc(); inc(5)
  show("counter", get(), inc(-1))
  local fns = {}
  for i = 1, 3 do fns[i] = function() return i * i end end
  show("loop upvalues", fns[1](), fns[2](), fns[3]())
  local function memoize(f)
    local cache = {}
    return function(x)
      local v = cache[x]
      if v == nil then v = f(x); cache[x] = v end
      return v
    end
  end
  local fib
  fib = memoize(function(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end)
  show("memo fib", fib(30), fib(80))
  local function compose(...)
    local fs = {...}
    return function(x)
      for i = #fs, 1, -1 do x = fs[i](x) end
      return x
    end
  end
  show("compose varargs", compose(function(x) return x + 1 end, function(x) return x * 2 end)(5), select("#", nil, nil))
end

-- Coroutines ------------------------------------------------------------------------
do
  local gen = coroutine.wrap(function()
    for i = 1, 3 do coroutine.yield(i * 10) end
    return "end"
  end)
  show("wrap", gen(), gen(), gen(), gen())
  local co = coroutine.create(function(a, b)
    local c = coroutine.yield(a + b)
    local d, e = coroutine.yield(c * 2)
    return d + e, "finished"
  end)
  show("resume", coroutine.resume(co, 1, 2))
  show("resume", coroutine.resume(co, 10))
  show("resume", coroutine.resume(co, 3, 4))
  show("status dead", coroutine.status(co), coroutine.resume(co))
  local function primes(limit)
    return coroutine.wrap(function()
      local sieve = {}
      for i = 2, limit do
        if not sieve[i] then
          coroutine.yield(i)
          for j = i * i, limit, i do sieve[j] = true end
        end
      end
    end)
  end
  local found = {}
  for p in primes(60) do found[#found + 1] = p end
  show("primes", table.concat(found, " "))
  local failing = coroutine.create(function() error({code = 7}) end)
  local ok, err = coroutine.resume(failing)
  show("coroutine error", ok, type(err), err.code, coroutine.status(failing))
  show("isyieldable", coroutine.isyieldable(), coroutine.wrap(function() return coroutine.isyieldable() end)())
  local closable = coroutine.create(function() coroutine.yield() end)
  coroutine.resume(closable)
  show("close", coroutine.close(closable), coroutine.status(closable))
end

-- Metatables ------------------------------------------------------------------------
do
  local Vec = {}
  Vec.__index = Vec
  local function vec(x, y) return setmetatable({x = x, y = y}, Vec) end
  Vec.__add = function(a, b) return vec(a.x + b.x, a.y + b.y) end
  Vec.__mul = function(a, k) return vec(a.x * k, a.y * k) end
  Vec.__eq = function(a, b) return a.x == b.x and a.y == b.y end
  Vec.__lt = function(a, b) return a:len2() < b:len2() end
  Vec.__le = function(a, b) return a:len2() <= b:len2() end
  Vec.__tostring = function(v) return "(" .. v.x .. "," .. v.y .. ")" end
  Vec.__len = function() return 2 end
  Vec.__concat = function(a, b) return tostring(a) .. tostring(b) end
  Vec.__call = function(v, k) return v.x * k + v.y end
  function Vec:len2() return self.x * self.x + self.y * self.y end
  local a, b = vec(1, 2), vec(3, 4)
  show("vec ops", a + b, a * 3, a == vec(1, 2), a < b, b <= a, #a, a .. b, a(10))
  local Animal = {}
  Animal.__index = Animal
  function Animal.new(name) return setmetatable({name = name}, Animal) end
  function Animal:speak() return self.name .. " makes a sound" end
  local Dog = setmetatable({}, {__index = Animal})
  Dog.__index = Dog
  function Dog.new(name) return setmetatable(Animal.new(name), Dog) end
  function Dog:speak() return self.name .. " barks; " .. Animal.speak(self) end
  show("inheritance", Dog.new("rex"):speak(), getmetatable(Dog.new("x")) == Dog)
  local log = {}
  local proxy = setmetatable({}, {
    __index = function(_, k) return "default:" .. k end,
    __newindex = function(t, k, v) log[#log + 1] = k; rawset(t, k, v * 2) end,
  })
  proxy.a = 5
  show("index newindex", proxy.a, proxy.b, table.concat(log, ","), rawget(proxy, "b"))
  local weak = setmetatable({}, {__mode = "k"})
  weak[{}] = true
  collectgarbage()
  collectgarbage()
  show("weak keys collected", next(weak) == nil)
  local closed = {}
  do
    local res <close> = setmetatable({}, {__close = function() closed[#closed + 1] = "closed" end})
    closed[#closed + 1] = "body"
  end
  show("to-be-closed", table.concat(closed, ","))
end

-- Errors ----------------------------------------------------------------------------
do
  local function strip(msg) return (tostring(msg):gsub("^.-lua_check%.lua:%d+: ", "")) end
  show("pcall ok", pcall(function(a, b) return a + b, "x" end, 2, 3))
  local ok, err = pcall(error, "plain", 0)
  show("error level 0", ok, err)
  ok, err = pcall(function() error("with position") end)
  show("error position", ok, strip(err))
  ok, err = pcall(function() error({tag = "obj"}) end)
  show("error object", ok, type(err), err.tag)
  ok, err = pcall(function() local t = nil; return t.x end)
  show("runtime error", ok, strip(err))
  ok, err = pcall(function() return 1 // 0 end)
  show("integer division by zero", ok, strip(err))
  ok, err = pcall(function() return {} + 1 end)
  show("arith on table", ok, strip(err))
  show("xpcall", xpcall(function() error("deep", 0) end, function(m) return "handled " .. m end))
  local depth = 0
  local function recurse() depth = depth + 1; return recurse() + 1 end
  ok, err = pcall(recurse)
  show("stack overflow caught", ok, strip(err):match("stack overflow") ~= nil, depth > 1000)
  show("assert", pcall(assert, false, "assert message"))
  show("select negative", select(-1, "a", "b", "c"), select(2, "a", "b", "c"))
end

-- Integer and float math ------------------------------------------------------------
do
  show("types", math.type(1), math.type(1.0), math.type("1"), math.type(2 ^ 31))
  show("division", 7 / 2, 7 // 2, -7 // 2, 7 // -2, 7.0 // 2, -7 % 3, 7 % -3, -7.5 % 2, 5.5 % -2)
  show("max min wrap", math.maxinteger, math.mininteger, math.maxinteger + 1 == math.mininteger, math.mininteger // -1)
  show("float ints", 1e15, 2 ^ 53, 2 ^ 63, -0.0, 1 / 0, -1 / 0, 0 / 0 ~= 0 / 0, 3 == 3.0)
  show("floor ceil", math.floor(3.7), math.ceil(3.2), math.floor(-3.5), math.ceil(-3.5), math.tointeger(4.0), math.tointeger(4.5))
  show("fmod abs", math.fmod(7, 3), math.fmod(-7, 3), math.fmod(7.5, 2), math.abs(-4), math.abs(math.mininteger))
  show("sqrt exp log", math.sqrt(16), string.format("%.10f", math.exp(1)), math.log(8, 2), math.log(100, 10), string.format("%.6f", math.sin(1)))
  show("bitwise", 0xF0 & 0x3C, 0xF0 | 0x0F, 0xF0 ~ 0xFF, ~0, 1 << 62, 1 << 63, 1 << 64, -1 >> 60, 3.0 | 0)
  show("ult compare", math.ult(1, -1), 1 < 1.5, -1 < math.mininteger + 0.0, math.maxinteger + 0.0 == 2 ^ 63)
  show("for float step", (function() local s = 0; for x = 0, 1, 0.25 do s = s + x end; return s end)())
  show("string to number arith", "0x10" + 0, "1e1" * 1, 10 // "3", "2" ^ 10)
  local sum, prod = 0, 1
  for i = 1, 100 do sum = sum + i * i end
  for i = 1, 20 do prod = prod * i end
  show("sum product", sum, prod, prod * 21 * 22 * 23)
  local acc = 0.0
  for i = 1, 1000 do acc = acc + 1 / i end
  show("harmonic", string.format("%.12f", acc))
  show("integer keys", ({[1] = "int", [2.0] = "float"})[2], ({[1.0] = "x"})[1])
end

-- Chunks, dump and goto -------------------------------------------------------------
do
  local chunk = load("local a, b = ...; return a * b + 1")
  show("load", chunk(6, 7))
  local f = load(string.dump(function(x) return x .. "!" end))
  show("dump undump", f("round trip"))
  show("load error", load("return +") == nil)
  local env = {value = 41}
  show("load env", load("return value + 1", "chunk", "t", env)())
  local i, out = 1, {}
  ::top::
  if i <= 5 then
    if i % 2 == 0 then goto skip end
    out[#out + 1] = i
    ::skip::
    i = i + 1
    goto top
  end
  show("goto", table.concat(out, ","))
  local big = {}
  for n = 1, 20000 do big[n] = tostring(n) end
  local total = 0
  for n = 1, #big do total = total + #big[n] end
  big = nil
  collectgarbage()
  show("big table", total)
end

print("done")
