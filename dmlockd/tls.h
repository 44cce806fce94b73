/*
 * tls.h: OpenSSL contexts for peer links: TLS 1.3 only, mutual
 * authentication against the cluster CA (with an optional CRL), and the
 * check that a peer's certificate names the roster name it claims.  Owns no
 * sockets; peer_link.c makes one SSL per connection from the context.
 *
 * Reload (SIGHUP): make a new context with tls_context_new() and hand it to
 * peer_transport_set_tls(), which closes every link (each was verified with
 * the old CA/CRL); the redialed links use the new context.
 */
#ifndef DMD_TLS_H
#define DMD_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

struct tls_files {
	const char	*ca;		/* PEM, the cluster CA */
	const char	*cert;		/* PEM, this node's certificate (chain) */
	const char	*key;		/* PEM, its private key */
	const char	*crl;		/* PEM, optional (NULL) */
};

/*
 * Make a context from the files.  Returns 0 and the context in *ret (the
 * caller owns one reference: SSL_CTX_free()), or -ENOENT / -EACCES (a file)
 * or -EINVAL (bad contents, key does not match certificate) with a message
 * naming the file in err.
 */
int tls_context_new(const struct tls_files *files, SSL_CTX **ret, char *err, size_t errlen);

/* Expect the peer to present a certificate for name (outbound links):
 * verification then fails inside the handshake with "hostname mismatch". */
int tls_expect_peer_name(SSL *ssl, const char *name);

/* True if the verified peer certificate carries name as a SAN DNS entry (or
 * as its CN when it has no SAN DNS entries); no wildcards. */
bool tls_peer_has_name(SSL *ssl, const char *name);

/* Why a handshake failed, for logs: the certificate verify result if that
 * failed, else the OpenSSL error code (from bufferevent_get_openssl_error()),
 * else "connection closed". */
void tls_describe_failure(SSL *ssl, unsigned long ssl_error, char *buf, size_t len);

#endif /* DMD_TLS_H */
