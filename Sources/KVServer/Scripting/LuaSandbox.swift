// LuaSandbox.swift: the globals a script sees, as Redis 7.0 locks them
// (script_lua.c, eval.c). Redis patches its Lua with read-only tables;
// Debian's Lua has none, so the same rules are built from metatables: the
// globals and every library table are empty proxies whose writes raise
// "Attempt to modify a readonly table", and reading a global that does not
// exist raises "Script attempted to access nonexistent global variable".
// rawset, setmetatable and getmetatable are wrapped so they cannot reach
// around a proxy. os, io, package, print, dofile, loadfile, debug, getfenv,
// setfenv and newproxy are not there (the last three as in Debian's Redis);
// loadstring and load refuse precompiled (binary) chunks, as Redis's Lua does.

/// Run once on a fresh state, with the full standard globals plus `redis`
/// (and, in the functions' interpreter, `kvd_library_redis`: the `redis`
/// table a library's code sees while FUNCTION LOAD runs it); returns the
/// error handler, the table behind the globals proxy (where KEYS and ARGV
/// are set), the proxy, which becomes the globals, and the switch that
/// turns the globals into the library API (only `redis`, whose missing
/// names raise as missing globals do) and back.
let luaSandboxSource = """
    local G = _G
    local dbg = debug
    local type, error, tostring, select, unpack = type, error, tostring, select, unpack
    local rawset, rawget, rawsetmetatable, rawgetmetatable = rawset, rawget, setmetatable, getmetatable
    local protected = rawsetmetatable({}, {__mode = 'k'})
    local function readonlyError() error('Attempt to modify a readonly table', 2) end

    local function frozen(meta)
      local view = rawsetmetatable({}, {__index = meta, __newindex = readonlyError, __metatable = false})
      protected[view] = true
      meta.__metatable = view
      return meta
    end
    local function readonly(t)
      local proxy = rawsetmetatable({}, frozen({__index = t, __newindex = readonlyError}))
      protected[proxy] = true
      return proxy
    end

    local S = {}
    -- Redis 7.0.15 as Debian ships it: without getfenv, setfenv and newproxy.
    for _, name in ipairs({'xpcall', 'tostring', 'next', 'assert', 'tonumber', 'rawequal', 'collectgarbage',
                           'type', 'select', 'unpack', 'gcinfo', 'pairs', 'rawget', 'ipairs', '_VERSION',
                           'error'}) do
      S[name] = G[name]
    end
    for _, name in ipairs({'string', 'table', 'math', 'coroutine', 'redis', 'cjson', 'bit', 'cmsgpack'}) do
      S[name] = readonly(G[name])
    end

    -- The strings' metatable leads to the real string library: its view
    -- hands out views of the tables inside it too.
    local stringMeta = rawgetmetatable('')
    local stringMetaView = rawsetmetatable({}, frozen({
      __index = function(_, key)
        local value = stringMeta[key]
        if value == G.string then return S.string end
        return value
      end,
      __newindex = readonlyError,
    }))
    protected[stringMetaView] = true
    -- In C, as in Redis's Lua: no script position in the message.
    S.rawset = function(t, k, v)
      if protected[t] then error('Attempt to modify a readonly table', 0) end
      return rawset(t, k, v)
    end
    S.setmetatable = function(t, meta)
      if protected[t] then error('Attempt to modify a readonly table', 0) end
      return rawsetmetatable(t, meta)
    end
    S.getmetatable = function(v)
      local meta = rawgetmetatable(v)
      if meta == stringMeta then return stringMetaView end
      return meta
    end

    local function binary(chunk) return type(chunk) == 'string' and chunk:byte(1) == 27 end
    local rawloadstring = loadstring
    S.loadstring = function(chunk, name)
      if binary(chunk) then return nil, 'binary chunks are not allowed' end
      return rawloadstring(chunk, name)
    end
    S.load = function(reader, name)
      local parts = {}
      while true do
        local part = reader()
        if part == nil or part == '' then break end
        if type(part) ~= 'string' then return nil, 'reader function must return a string' end
        parts[#parts + 1] = part
      end
      return S.loadstring(table.concat(parts), name or '=(load)')
    end

    -- Redis 7.0's pcall hands back an error table's message, as Redis 6 did.
    local rawpcall = pcall
    S.pcall = function(f, ...)
      local results = {n = 0}
      local function keep(...) results.n = select('#', ...); for i = 1, results.n do results[i] = (select(i, ...)) end end
      keep(rawpcall(f, ...))
      if not results[1] and type(results[2]) == 'table' then
        local message = results[2].err
        if type(message) == 'string' or type(message) == 'number' then results[2] = message end
      end
      return unpack(results, 1, results.n)
    end

    -- FUNCTION LOAD's globals: only the library API's redis table.
    local function strict(t)
      local proxy = rawsetmetatable({}, frozen({
        __index = function(_, name)
          local value = t[name]
          if value == nil then
            error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
          end
          return value
        end,
        __newindex = readonlyError,
      }))
      protected[proxy] = true
      return proxy
    end
    local visible = S
    local library = {}
    if G.kvd_library_redis then library.redis = strict(G.kvd_library_redis) end
    local function loading(on) if on then visible = library else visible = S end end

    local P = rawsetmetatable({}, frozen({
      __index = function(_, name)
        local value = visible[name]
        if value == nil then
          error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
        end
        return value
      end,
      __newindex = readonlyError,
    }))
    protected[P] = true
    S._G = P

    -- Where an error was raised, for the reply's "on @user_script:N": the
    -- script's own frame, past redis.call (C) and past these wrappers.
    local function handler(err)
      local level = 2
      local i = dbg.getinfo(level, 'nSl')
      if i and i.what == 'C' then level = 3; i = dbg.getinfo(level, 'nSl') end
      while i and i.source == '=kvd' do level = level + 1; i = dbg.getinfo(level, 'nSl') end
      if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end
      if i then
        err['source'] = i.source
        err['line'] = i.currentline
      end
      return err
    end
    return handler, S, P, loading
    """
