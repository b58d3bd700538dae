-- benchlab: the request of this run (agent/external_load.cc)
wrk.method = "POST"
wrk.body = "{\"name\":\"bench \\\"lab\\\"\",\"n\":1}\010"
wrk.headers["Content-Type"] = "application/json"
