-- Exact accounting for a wrk run (benchmarks/wrk.py, -s this file).
--
-- Each wrk thread has its own Lua state: request() counts the requests
-- it writes (wrk calls it whenever it starts writing a request, also on a
-- connection it reopened), response() counts the responses it parsed
-- (called where wrk counts a complete response, for every response with
-- headers, which every HTTP server here sends).  done()
-- runs in the main state once the threads have stopped and sums the
-- threads' counters, read with thread:get.
--
-- wrk also calls request() once on the first thread's state before that
-- thread starts (script_verify_request in src/script.c, which checks the
-- request parses and counts how many it pipelines); that request is never
-- written, so done() leaves it out.

local threads = {}
local prebuilt = nil

function setup(thread)
   threads[#threads + 1] = thread
end

function init(args)
   sent = 0
   received = 0
   -- wrk.init set the Host header before calling init
   prebuilt = wrk.format()
end

function request()
   sent = sent + 1
   return prebuilt
end

function response(status, headers, body)
   received = received + 1
end

function done(summary, latency, requests)
   local sent_total, received_total = -1, 0  -- -1: the verifying call
   for _, thread in ipairs(threads) do
      sent_total = sent_total + thread:get("sent")
      received_total = received_total + thread:get("received")
   end
   io.write(string.format(
      "wrk accounting: sent %d, received %d, threads %d, completed %d\n",
      sent_total, received_total, #threads, summary.requests))
end
