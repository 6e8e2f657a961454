-- keys.lua: a wrk script for bench.sh with BENCH_ACCOUNTS > 1: each request
-- carries the next of the keys in $BENCH_KEYS_FILE (one a line, an account
-- each), so that the requests are spread evenly over the accounts. Each
-- wrk thread starts at another key.
local keys = {}
for line in io.lines(os.getenv("BENCH_KEYS_FILE")) do
    if line ~= "" then keys[#keys + 1] = line end
end
local n = 0

function setup(thread)
    thread:set("offset", math.random(#keys))
end

function request()
    n = n + 1
    local k = keys[((n + (offset or 0)) % #keys) + 1]
    return wrk.format(nil, nil, { ["Authorization"] = "Bearer " .. k })
end
