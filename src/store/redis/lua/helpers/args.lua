-- The script's input: one JSON object (ARGV[1]) with named fields, decoded once. cjson gives numbers as Lua numbers,
-- booleans as booleans, and JSON null as cjson.null (not nil), so TypeScript sends "" or 0 for "none", never null.
local A = cjson.decode(ARGV[1])
