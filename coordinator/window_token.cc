#include "coordinator/window_token.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace benchlab {

std::string WindowToken(std::string_view lab_secret, std::string_view spool_key) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), lab_secret.data(), static_cast<int>(lab_secret.size()),
       reinterpret_cast<const unsigned char*>(spool_key.data()), spool_key.size(), digest, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  token.reserve(kWindowTokenHexChars);
  for (unsigned int i = 0; i < length && token.size() < kWindowTokenHexChars; ++i) {
    token += kHex[digest[i] >> 4];
    token += kHex[digest[i] & 15];
  }
  return token;
}

}  // namespace benchlab
