// Checks a daemon makes on its own TLS files before it uses them (rpc/tls.h), so that a wrong
// file is named at start-up instead of failing every handshake later.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "common/status.h"

namespace benchlab {

struct PemFile {
  std::string path;  // for messages
  std::string text;
};

// InvalidArgument naming the file unless `cert` is issued by `ca` and valid now (not before its
// start, not after its end), and `key` is its private key.
Status CheckIssuedBy(const PemFile& ca, const PemFile& cert, const PemFile& key);

// Why a peer's certificate does not verify against the fleet's CA (rpc/tls.h refuses its
// handshake for it and reports the refusal). kExpired and kNotYetValid are the peer's own dates;
// a CA out of its dates is kInvalid.
enum class ChainFault { kNone, kExpired, kNotYetValid, kUnknownCa, kInvalid };

struct ChainCheck {
  ChainFault fault = ChainFault::kNone;
  std::string detail;  // OpenSSL's words for the failure; "" when kNone
};

// Verifies the PEM certificate `leaf` (first certificate of the text), with any certificates of
// `chain` as untrusted intermediates, against the CA certificate `ca` at the current time, as the
// certificate of a TLS client (`peer_is_client`) or server. A `ca` or `leaf` that holds no
// certificate: kInvalid.
ChainCheck VerifyPeerChain(std::string_view ca, std::string_view leaf, std::string_view chain,
                           bool peer_is_client);

// The serial numbers (upper-case hexadecimal) a CRL lists, after checking that `ca` signed it.
// InvalidArgument naming the file when it is not a CRL or not the CA's.
Result<std::set<std::string>> ReadCrl(const PemFile& ca, const PemFile& crl);

// The text of a file; NotFound naming it when it cannot be read.
Result<PemFile> ReadPemFile(const std::string& path);

}  // namespace benchlab
