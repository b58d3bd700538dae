// Checks a daemon makes on its own TLS files before it uses them (rpc/tls.h), so that a wrong
// file is named at start-up instead of failing every handshake later.
#pragma once

#include <set>
#include <string>

#include "common/status.h"

namespace benchlab {

struct PemFile {
  std::string path;  // for messages
  std::string text;
};

// InvalidArgument naming the file unless `cert` is issued by `ca` and valid now (not before its
// start, not after its end), and `key` is its private key.
Status CheckIssuedBy(const PemFile& ca, const PemFile& cert, const PemFile& key);

// The serial numbers (upper-case hexadecimal) a CRL lists, after checking that `ca` signed it.
// InvalidArgument naming the file when it is not a CRL or not the CA's.
Result<std::set<std::string>> ReadCrl(const PemFile& ca, const PemFile& crl);

// The text of a file; NotFound naming it when it cannot be read.
Result<PemFile> ReadPemFile(const std::string& path);

}  // namespace benchlab
