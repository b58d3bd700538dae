// The network of benchlab's service fuzz targets (docs/fuzzing.md): nothing they run may reach
// another machine or another process, whatever the input asks for.
//
// This file's .cc interposes two libc calls for the whole fuzz process:
//   connect(2)      a stream socket connecting to any loopback address (127.0.0.0/8, ::1, or
//                   IPv4-mapped 127/8) is connected to the sink instead, on the same address
//                   family; every other destination, and every non-stream inet socket, fails
//                   with ENETUNREACH. AF_UNIX and other families pass through.
//   getaddrinfo(3)  resolves numeric addresses and "localhost" only; any other name fails with
//                   EAI_NONAME, so no input reaches a DNS server.
// The sink is a thread of the fuzz process listening on 127.0.0.1 and ::1 (ephemeral ports).
// Each connection, on a thread of its own, gets one answer: the sink reads a request head (up to
// 64 KiB or 200 ms), writes the current response bytes, and closes. Thread-safe.
#pragma once

#include <string>

namespace benchlab::fuzz {

// Starts the sink once; later calls do nothing. Until it runs, every inet connect fails.
void StartLoopbackSink();

// What the sink answers from now on: raw bytes, sent as given.
void SetSinkResponse(std::string bytes);

// "HTTP/1.1 200 OK", Content-Length: 5, Connection: close, body "hello".
const std::string& DefaultSinkResponse();

// How many connects the guard refused since the start (destinations off loopback).
unsigned long RefusedConnects();

}  // namespace benchlab::fuzz
