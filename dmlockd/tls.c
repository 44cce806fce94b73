/*
 * tls.c: building the SSL_CTX for peer links (TLS 1.3 only, mutual
 * authentication, cluster CA, optional CRL) and naming checks on peer
 * certificates.  Never logs; errors are returned as text.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "dmlockd/tls.h"

static int
file_error(const char *what, const char *path, char *err, size_t errlen)
{
	int r = access(path, R_OK) < 0 ? -errno : -EINVAL;
	unsigned long e = ERR_peek_last_error();
	char detail[256] = "";

	if (r != -EINVAL)
		snprintf(detail, sizeof(detail), "%s", strerror(-r));
	else if (e != 0)
		ERR_error_string_n(e, detail, sizeof(detail));
	else
		snprintf(detail, sizeof(detail), "invalid contents");
	snprintf(err, errlen, "%s %s: %s", what, path, detail);
	ERR_clear_error();
	return r;
}

static int
load_crl(SSL_CTX *ctx, const char *path, char *err, size_t errlen)
{
	X509_STORE *store = SSL_CTX_get_cert_store(ctx);
	X509_LOOKUP *lookup = X509_STORE_add_lookup(store, X509_LOOKUP_file());

	if (lookup == NULL || X509_load_crl_file(lookup, path, X509_FILETYPE_PEM) <= 0)
		return file_error("CRL", path, err, errlen);
	X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
	return 0;
}

int
tls_context_new(const struct tls_files *files, SSL_CTX **ret, char *err, size_t errlen)
{
	SSL_CTX *ctx;
	int r;

	ERR_clear_error();
	ctx = SSL_CTX_new(TLS_method());
	if (ctx == NULL) {
		snprintf(err, errlen, "SSL_CTX_new failed");
		return -ENOMEM;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1) {
		snprintf(err, errlen, "TLS 1.3 is not available");
		r = -EINVAL;
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, files->cert) != 1) {
		r = file_error("certificate", files->cert, err, errlen);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, files->key, SSL_FILETYPE_PEM) != 1) {
		r = file_error("key", files->key, err, errlen);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "key %s does not match certificate %s", files->key, files->cert);
		r = -EINVAL;
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, files->ca, NULL) != 1) {
		r = file_error("CA", files->ca, err, errlen);
		goto fail;
	}
	if (files->crl != NULL) {
		r = load_crl(ctx, files->crl, err, errlen);
		if (r < 0)
			goto fail;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_verify_depth(ctx, 4);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	*ret = ctx;
	return 0;
fail:
	SSL_CTX_free(ctx);
	ERR_clear_error();
	return r;
}

/* How both ends match a node name against a certificate: as a DNS name
 * (SAN DNS, or the CN when there is none), never a wildcard. */
#define TLS_NAME_FLAGS X509_CHECK_FLAG_NO_WILDCARDS

/* Node names are DNS names even when shaped like an IPv4 address
 * ("10.0.0.1" is a valid node name): SSL_set1_host() would turn such a name
 * into a SAN IP check on OpenSSL 3, which the acceptor's X509_check_host()
 * in tls_peer_has_name() never does, so the link would never come up.  The
 * verify parameter's host is always checked as a DNS name. */
int
tls_expect_peer_name(SSL *ssl, const char *name)
{
	X509_VERIFY_PARAM *param = SSL_get0_param(ssl);

	X509_VERIFY_PARAM_set_hostflags(param, TLS_NAME_FLAGS);
	return X509_VERIFY_PARAM_set1_host(param, name, 0) == 1 ? 0 : -ENOMEM;
}

bool
tls_peer_has_name(SSL *ssl, const char *name)
{
	X509 *cert = SSL_get1_peer_certificate(ssl);
	bool ok;

	if (cert == NULL)
		return false;
	ok = SSL_get_verify_result(ssl) == X509_V_OK &&
	    X509_check_host(cert, name, strlen(name), TLS_NAME_FLAGS, NULL) == 1;
	X509_free(cert);
	return ok;
}

void
tls_describe_failure(SSL *ssl, unsigned long ssl_error, char *buf, size_t len)
{
	long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	char e[256] = "";

	if (ssl_error != 0)
		ERR_error_string_n(ssl_error, e, sizeof(e));
	if (v != X509_V_OK)
		snprintf(buf, len, "certificate verify failed: %s%s%s", X509_verify_cert_error_string(v),
		    e[0] != '\0' ? "; " : "", e);
	else if (e[0] != '\0')
		snprintf(buf, len, "%s", e);
	else
		snprintf(buf, len, "connection closed during the TLS handshake");
}
