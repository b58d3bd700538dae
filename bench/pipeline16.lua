-- wrk script: pipelines 16 requests per connection. wrk sends the string request() returns in
-- one write and counts every response; it writes again once all of them have arrived.
-- Usage: wrk -s bench/pipeline16.lua URL   (DEPTH in the environment overrides 16)
local depth = tonumber(os.getenv("DEPTH") or "16")

init = function(args)
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format(nil)
  end
  req = table.concat(r)
end

request = function()
  return req
end
