// The C surface kvd's scripting needs: Lua 5.1 (Debian's liblua5.1) with
// the cjson and bit libraries Redis loads (Debian's lua-cjson, lua-bitop), plus
// static inline stand-ins for the API's function-like macros, which do not
// import into Swift, and the one trampoline that lets a Swift function be a
// Lua C function without a Lua error ever unwinding Swift frames.
#ifndef KVD_CLUA_SHIM_H
#define KVD_CLUA_SHIM_H

#include <stddef.h>
#include <stdlib.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

/// A Swift function Lua calls: returns its number of results, or -1 to
/// raise the value on top of the stack as a Lua error. The raise happens in
/// C, after the Swift function returned, so longjmp never crosses Swift.
typedef int (*kvd_lua_function)(lua_State *L, void *context);

static inline int kvd_lua_trampoline(lua_State *L) {
    kvd_lua_function function = (kvd_lua_function)lua_touserdata(L, lua_upvalueindex(1));
    int results = function(L, lua_touserdata(L, lua_upvalueindex(2)));
    if (results < 0) return lua_error(L);
    return results;
}

/// Pushes `function` as a Lua function that receives `context`.
static inline void kvd_lua_pushfunction(lua_State *L, kvd_lua_function function, void *context) {
    lua_pushlightuserdata(L, (void *)function);
    lua_pushlightuserdata(L, context);
    lua_pushcclosure(L, kvd_lua_trampoline, 2);
}

/// Opens one standard library (`luaopen_*`) under `name`, as lua.c does.
static inline void kvd_lua_openlibrary(lua_State *L, lua_CFunction open, const char *name) {
    lua_pushcfunction(L, open);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
}

/// The modules' openers, which Debian's packages ship without a header.
int luaopen_cjson(lua_State *L);
int luaopen_bit(lua_State *L);

/// Opens a module that returns its table, and makes it global `name`.
static inline void kvd_lua_openmodule(lua_State *L, lua_CFunction open, const char *name) {
    lua_pushcfunction(L, open);
    lua_call(L, 0, 1);
    lua_setfield(L, LUA_GLOBALSINDEX, name);
}

/// A Swift function the count hook calls between instructions: returns
/// nonzero to raise the value it pushed as a Lua error (from C, as above).
typedef int (*kvd_lua_hook_function)(lua_State *L, void *context);

/// The hook and its context, kept in the registry (a hook cannot capture).
static inline void kvd_lua_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_getfield(L, LUA_REGISTRYINDEX, "kvd.hook");
    kvd_lua_hook_function function = (kvd_lua_hook_function)lua_touserdata(L, -1);
    lua_getfield(L, LUA_REGISTRYINDEX, "kvd.hookcontext");
    void *context = lua_touserdata(L, -1);
    lua_pop(L, 2);
    if (function && function(L, context)) lua_error(L);
}

/// Installs `function` as the hook (`mask`: LUA_MASKCOUNT every `count`
/// instructions, or LUA_MASKLINE), or removes it when `function` is NULL.
static inline void kvd_lua_sethook(lua_State *L, kvd_lua_hook_function function, void *context, int mask, int count) {
    lua_pushlightuserdata(L, (void *)function);
    lua_setfield(L, LUA_REGISTRYINDEX, "kvd.hook");
    lua_pushlightuserdata(L, context);
    lua_setfield(L, LUA_REGISTRYINDEX, "kvd.hookcontext");
    lua_sethook(L, function ? kvd_lua_hook : NULL, function ? mask : 0, count);
}

/// The interpreter's heap, counted: `used` bytes now, and a ceiling that
/// growth may not pass (0: none). A refused growth makes Lua raise
/// "not enough memory"; shrinking and freeing always succeed, as Lua needs.
typedef struct {
    size_t used;
    size_t limit;
} kvd_lua_memory;

static inline void *kvd_lua_allocate(void *ud, void *block, size_t osize, size_t nsize) {
    kvd_lua_memory *memory = (kvd_lua_memory *)ud;
    if (nsize == 0) {
        free(block);
        memory->used -= osize;
        return NULL;
    }
    if (nsize > osize && memory->limit != 0 && memory->used - osize + nsize > memory->limit) return NULL;
    void *grown = realloc(block, nsize);
    if (grown) memory->used = memory->used - osize + nsize;
    return grown;
}

/// A new interpreter whose heap `memory` counts.
static inline lua_State *kvd_lua_newstate(kvd_lua_memory *memory) {
    return lua_newstate(kvd_lua_allocate, memory);
}

static inline void kvd_lua_pop(lua_State *L, int n) { lua_pop(L, n); }
static inline void kvd_lua_newtable(lua_State *L) { lua_newtable(L); }
static inline int kvd_lua_globalsindex(void) { return LUA_GLOBALSINDEX; }
static inline int kvd_lua_registryindex(void) { return LUA_REGISTRYINDEX; }

#endif
