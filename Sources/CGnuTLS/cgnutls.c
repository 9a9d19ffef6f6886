#include "CGnuTLS.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

// ECDHE only for TLS 1.2 (no static RSA, no DHE without parameters), AEAD ciphers only;
// TLS 1.3's suites are all forward secret.
const char *const CGnuTLS_priorities =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:"
    "-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD";

struct cgnutls_pair {
    gnutls_pcert_st certificates[16];
    unsigned int count;
    gnutls_privkey_t key;
    long long expiry;
};

static _Atomic(struct cgnutls_pair *) current = NULL;

static void note(char *detail, size_t size, const char *what, const char *reason) {
    if (detail != NULL && size > 0) {
        snprintf(detail, size, "%s%s%s", what, reason[0] ? ": " : "", reason);
    }
}

static int read_file(const char *path, gnutls_datum_t *out, char *detail, size_t size) {
    int result = gnutls_load_file(path, out);
    if (result < 0) {
        // gnutls_load_file leaves errno from fopen/read: name the system's reason.
        note(detail, size, errno ? strerror(errno) : gnutls_strerror(result), "");
        return -1;
    }
    return 0;
}

// The pair checked as GnuTLS' own credentials would check it: parsed, key matching.
static int check_pair(const gnutls_datum_t *cert, const gnutls_datum_t *key, char *detail, size_t size) {
    gnutls_certificate_credentials_t credentials;
    if (gnutls_certificate_allocate_credentials(&credentials) < 0) {
        note(detail, size, "out of memory", "");
        return CGNUTLS_CERT_INVALID;
    }
    int result = gnutls_certificate_set_x509_key_mem2(credentials, cert, key, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_certificate_free_credentials(credentials);
    if (result == GNUTLS_E_CERTIFICATE_KEY_MISMATCH) {
        note(detail, size, "the key is not the certificate's", "");
        return CGNUTLS_MISMATCH;
    }
    if (result < 0) {
        note(detail, size, gnutls_strerror(result), "");
        return CGNUTLS_KEY_INVALID;
    }
    return CGNUTLS_OK;
}

static int build(struct cgnutls_pair *pair, const gnutls_datum_t *cert, const gnutls_datum_t *key, long long now,
                 char *detail, size_t size) {
    pair->count = sizeof pair->certificates / sizeof pair->certificates[0];
    int result = gnutls_pcert_list_import_x509_raw(pair->certificates, &pair->count, cert, GNUTLS_X509_FMT_PEM, 0);
    if (result < 0 || pair->count == 0) {
        note(detail, size, result < 0 ? gnutls_strerror(result) : "no certificate in the file", "");
        return CGNUTLS_CERT_INVALID;
    }
    gnutls_x509_crt_t leaf;
    if (gnutls_x509_crt_init(&leaf) < 0 || gnutls_x509_crt_import(leaf, &pair->certificates[0].cert, GNUTLS_X509_FMT_DER) < 0) {
        note(detail, size, "the first certificate cannot be read", "");
        return CGNUTLS_CERT_INVALID;
    }
    long long activation = (long long)gnutls_x509_crt_get_activation_time(leaf);
    pair->expiry = (long long)gnutls_x509_crt_get_expiration_time(leaf);
    gnutls_x509_crt_deinit(leaf);
    if (pair->expiry <= now) {
        note(detail, size, "the certificate has expired", "");
        return CGNUTLS_EXPIRED;
    }
    if (activation > now) {
        note(detail, size, "the certificate is not valid yet", "");
        return CGNUTLS_NOT_YET_VALID;
    }
    if (gnutls_privkey_init(&pair->key) < 0 ||
        (result = gnutls_privkey_import_x509_raw(pair->key, key, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        note(detail, size, gnutls_strerror(result), "");
        return CGNUTLS_KEY_INVALID;
    }
    return CGNUTLS_OK;
}

int CGnuTLS_load(const char *cert_path, const char *key_path, long long now, char *detail, size_t detail_size) {
    gnutls_datum_t cert = {NULL, 0}, key = {NULL, 0};
    int problem = CGNUTLS_OK;
    if (read_file(cert_path, &cert, detail, detail_size) < 0) {
        problem = CGNUTLS_CERT_UNREADABLE;
    } else if (read_file(key_path, &key, detail, detail_size) < 0) {
        problem = CGNUTLS_KEY_UNREADABLE;
    } else {
        struct cgnutls_pair *pair = calloc(1, sizeof *pair);
        problem = pair == NULL ? CGNUTLS_CERT_INVALID : build(pair, &cert, &key, now, detail, detail_size);
        if (problem == CGNUTLS_OK) {
            problem = check_pair(&cert, &key, detail, detail_size);
        }
        if (problem == CGNUTLS_OK) {
            atomic_store(&current, pair);
        } else if (pair != NULL) {
            for (unsigned int i = 0; i < pair->count; i++) gnutls_pcert_deinit(&pair->certificates[i]);
            if (pair->key != NULL) gnutls_privkey_deinit(pair->key);
            free(pair);
        }
    }
    // The key's bytes are wiped before they are freed.
    if (key.data != NULL) { gnutls_memset(key.data, 0, key.size); gnutls_free(key.data); }
    if (cert.data != NULL) gnutls_free(cert.data);
    return problem;
}

long long CGnuTLS_current_expiry(void) {
    struct cgnutls_pair *pair = atomic_load(&current);
    return pair == NULL ? 0 : pair->expiry;
}

static int retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                    const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                    gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *privkey) {
    (void)session; (void)req_ca_rdn; (void)nreqs; (void)pk_algos; (void)pk_algos_length;
    struct cgnutls_pair *pair = atomic_load(&current);
    if (pair == NULL) return -1;
    *pcert = pair->certificates;
    *pcert_length = pair->count;
    *privkey = pair->key;
    return 0;
}

void *CGnuTLS_certificate_callback(void) {
    return (void *)retrieve;
}

struct cgnutls_client {
    gnutls_session_t session;
    gnutls_certificate_credentials_t credentials;
};

void *CGnuTLS_client_open(int fd, const char *ca_file, const char *server_name, const char *priorities,
                          char *detail, size_t detail_size) {
    struct cgnutls_client *client = calloc(1, sizeof *client);
    if (client == NULL) return NULL;
    int result = gnutls_certificate_allocate_credentials(&client->credentials);
    if (result >= 0) result = gnutls_certificate_set_x509_trust_file(client->credentials, ca_file, GNUTLS_X509_FMT_PEM);
    if (result >= 0) result = gnutls_init(&client->session, GNUTLS_CLIENT | GNUTLS_NO_SIGNAL);
    if (result >= 0) result = priorities ? gnutls_priority_set_direct(client->session, priorities, NULL)
                                         : gnutls_set_default_priority(client->session);
    if (result >= 0) result = gnutls_credentials_set(client->session, GNUTLS_CRD_CERTIFICATE, client->credentials);
    if (result >= 0) {
        gnutls_session_set_verify_cert(client->session, server_name, 0);
        gnutls_transport_set_int(client->session, fd);
        gnutls_handshake_set_timeout(client->session, GNUTLS_DEFAULT_HANDSHAKE_TIMEOUT);
        do {
            result = gnutls_handshake(client->session);
        } while (result < 0 && gnutls_error_is_fatal(result) == 0);
    }
    if (result < 0) {
        note(detail, detail_size, gnutls_strerror(result), "");
        CGnuTLS_client_close(client);
        return NULL;
    }
    return client;
}

long CGnuTLS_client_send(void *session, const void *bytes, size_t count) {
    struct cgnutls_client *client = session;
    ssize_t sent;
    do {
        sent = gnutls_record_send(client->session, bytes, count);
    } while (sent == GNUTLS_E_AGAIN || sent == GNUTLS_E_INTERRUPTED);
    return (long)sent;
}

long CGnuTLS_client_recv(void *session, void *bytes, size_t count) {
    struct cgnutls_client *client = session;
    ssize_t read;
    do {
        read = gnutls_record_recv(client->session, bytes, count);
    } while (read == GNUTLS_E_INTERRUPTED);
    return (long)read;
}

size_t CGnuTLS_client_pending(void *session) {
    return gnutls_record_check_pending(((struct cgnutls_client *)session)->session);
}

const char *CGnuTLS_client_protocol(void *session) {
    const char *name = gnutls_protocol_get_name(gnutls_protocol_get_version(((struct cgnutls_client *)session)->session));
    return name ? name : "";
}

void CGnuTLS_client_close(void *session) {
    struct cgnutls_client *client = session;
    if (client == NULL) return;
    if (client->session != NULL) {
        gnutls_bye(client->session, GNUTLS_SHUT_WR);
        gnutls_deinit(client->session);
    }
    if (client->credentials != NULL) gnutls_certificate_free_credentials(client->credentials);
    free(client);
}
