-- wrk_predict.lua - wrk's script for serve_model.py: each request asks for a
-- batch of 1..max_batch (default 64) images from a fixed random sequence, and
-- the end prints one parseable line like client.py's:
--     requests/s: R p50_ms: A p99_ms: B errors: E
--     wrk -t1 -c2 -d2s -s wrk_predict.lua http://127.0.0.1:PORT [-- MAX_BATCH]
local max_batch = 64

function init(args)
   if args[1] then max_batch = tonumber(args[1]) end
   math.randomseed(12345)
end

function request()
   local path = string.format("/predict?batch=%d&seed=%d", math.random(1, max_batch), math.random(0, 2147483647))
   return wrk.format("GET", path)
end

function done(summary, latency, requests)
   local e = summary.errors
   local errors = e.connect + e.read + e.write + e.status + e.timeout
   io.write(string.format("requests/s: %.1f p50_ms: %.3f p99_ms: %.3f errors: %d\n",
      summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1e3,
      latency:percentile(99) / 1e3, errors))
end
