package dev.fencing.web.internal;

import dev.fencing.testsupport.LogRecords;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the header filters log, from a signing trial where neither service said a word: a forged token's refusal
 * says why (an unknown or retired key after a rotation in the wrong order, a bad signature) with the key id, at most
 * once a minute; a signed token reaching a service with no verifier is warned about once (its signature was ignored,
 * and a forged one would have been accepted).
 */
class HeaderAdmissionLogTest {

    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes();
    private LogRecords log;
    private List<LogRecord> records;

    @BeforeEach
    void listen() {
        log = LogRecords.of(HeaderAdmission.class);
        records = log.records();
    }

    @AfterEach
    void stop() {
        log.close();
    }

    private static List<String> header(FencingToken token) {
        return List.of(FencingHeader.format(List.of(token)));
    }

    @Test
    void aForgedTokensRefusalIsLoggedWithWhyAndTheKeyIdAtMostOnceAMinute() {
        HeaderAdmission verifying = new HeaderAdmission(
                new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET))), ForgedTokenCounters.NONE, null);
        FencingToken newKey = TokenSigner.hmac("k2", SECRET).sign(new FencingToken("ledger:7", 3, "caller"));
        for (int request = 0; request < 3; request++) {
            assertThat(verifying.admit(header(newKey), null, () -> "POST /internal/ledger/7").admitted()).isFalse();
        }
        assertThat(records).singleElement().satisfies(record -> {
            assertThat(record.getLevel()).isEqualTo(Level.WARNING);
            assertThat(record.getMessage()).contains("'ledger:7'", "POST /internal/ledger/7", "key 'k2'",
                    "does not know", "fencing.signing keys differ").doesNotContain(new String(SECRET));
        });
        // another cause within the minute has a line of its own: one cause does not hide another
        FencingToken unsigned = new FencingToken("ledger:8", 3, "stray");
        assertThat(verifying.admit(header(unsigned), null, () -> "POST /internal/ledger/8").admitted()).isFalse();
        assertThat(records).hasSize(2);
        assertThat(records.get(1).getMessage()).contains("'ledger:8'", "unsigned");
    }

    @Test
    void aSignedTokenAtAServiceWithoutAVerifierIsWarnedAboutOnce() {
        HeaderAdmission unverified = new HeaderAdmission(null, ForgedTokenCounters.NONE, null);
        FencingToken signed = TokenSigner.hmac("k1", SECRET).sign(new FencingToken("ledger:7", 3, "caller"));
        assertThat(unverified.admit(header(new FencingToken("ledger:7", 2, "caller")), null, () -> "POST /x")
                .admitted()).isTrue();
        assertThat(records).as("an unsigned token says nothing").isEmpty();
        for (int request = 0; request < 3; request++) {
            assertThat(unverified.admit(header(signed), null, () -> "POST /x").admitted()).isTrue();
        }
        assertThat(records).singleElement().satisfies(record -> assertThat(record.getMessage())
                .contains("key 'k1'", "no TokenVerifier", "fencing.signing"));
    }
}
