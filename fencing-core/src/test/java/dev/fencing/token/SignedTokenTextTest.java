package dev.fencing.token;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The optional signature part of the text form: round trip, and strictness. */
class SignedTokenTextTest {

    private static final byte[] BYTES = new byte[32];

    static {
        Arrays.fill(BYTES, (byte) 0xAB);
    }

    @Test
    void aSignedTokenAppendsKeyIdAndBase64urlAndParsesBack() {
        FencingToken token = new FencingToken("accounts:42", 34, "client 7!", TokenSignature.of("k-1_a", BYTES));
        String text = token.toText();
        assertThat(text).isEqualTo("accounts:42#34@client%207%21!k-1_a.q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s");
        assertThat(FencingToken.parse(text)).isEqualTo(token);
        assertThat(FencingToken.parse(text).signature().bytes()).isEqualTo(BYTES);
        assertThat(token.unsigned().toText()).isEqualTo("accounts:42#34@client%207%21");
        // toString is for logs: the key id, never the signature (a valid signed token is a credential)
        assertThat(token).isNotEqualTo(token.unsigned()).hasToString("accounts:42#34@client%207%21!k-1_a.\u2026");
        assertThat(token.unsigned()).hasToString("accounts:42#34@client%207%21");
    }

    @Test
    void theLongestSignedTokenFitsTheTextLimit() {
        String part = "\u00e9".repeat(FencingToken.MAX_PART_LENGTH);
        FencingToken token = new FencingToken(part, Long.MAX_VALUE, part,
                TokenSignature.of("k".repeat(TokenSignature.MAX_KEY_ID_LENGTH),
                        new byte[TokenSignature.MAX_SIGNATURE_BYTES]));
        assertThat(token.toText().length()).isLessThanOrEqualTo(FencingToken.MAX_TEXT_LENGTH);
        assertThat(FencingToken.parse(token.toText())).isEqualTo(token);
    }

    @Test
    void aMalformedSignaturePartIsRefusedSayingWhat() {
        String base = "accounts#34@h";
        assertThatThrownBy(() -> FencingToken.parse(base + "!")).isInstanceOf(TokenFormatException.class)
                .hasMessageContaining("no '.'");
        assertThatThrownBy(() -> FencingToken.parse(base + "!.AAAA")).hasMessageContaining("key id must not be empty");
        assertThatThrownBy(() -> FencingToken.parse(base + "!k1.")).hasMessageContaining("0 bytes");
        assertThatThrownBy(() -> FencingToken.parse(base + "!k1.AB")).hasMessageContaining("not canonical");
        assertThatThrownBy(() -> FencingToken.parse(base + "!k1.AA==")).hasMessageContaining("Base64url alphabet");
        assertThatThrownBy(() -> FencingToken.parse(base + "!k1.AA!k2.AA")).hasMessageContaining("Base64url alphabet");
        assertThatThrownBy(() -> FencingToken.parse(base + "!k1.A")).hasMessageContaining("not valid Base64url");
        assertThatThrownBy(() -> FencingToken.parse(base + "!k:1.AA")).hasMessageContaining("index 1");
        assertThatThrownBy(() -> FencingToken.parse(base + "!k1." + "A".repeat(88)))
                .hasMessageContaining("66 bytes");
        assertThat(FencingToken.parse(base + "!k1.AA").signature().bytes()).containsExactly(0);
    }

    @Test
    @Timeout(10)
    void aTokenMalformedBeforeItsSignatureIsNamedWithoutTheSignature() {
        // a genuine signature on a mangled token (a padded value, a proxy's edit): the message goes into 400 answers
        // and logs, and the signature with the token's other parts is a valid credential
        String sig = "!k1.q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s";
        for (String text : new String[] {"accounts#034@h" + sig, "accounts#+34@h" + sig, "accounts #34@h" + sig,
                "%20#34@h" + sig, "accounts%01#34@h" + sig, "accounts#34@h%FF" + sig, "accounts#0@h" + sig}) {
            assertThatThrownBy(() -> FencingToken.parse(text)).as(text).isInstanceOf(TokenFormatException.class)
                    .message().doesNotContain("q6urq6urq6").contains("!...");
        }
    }

    @Test
    @Timeout(10)
    void aSignatureShowsItsKeyIdOnlyInToString() {
        // logged by a caller ("signed with " + token.signature()): the bytes with the token's parts are a credential
        TokenSignature signature = TokenSignature.of("k1", BYTES);
        assertThat(signature).hasToString("k1.\u2026");
        assertThat(signature.toText()).isEqualTo("k1.q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s");
    }

    @Test
    void signaturesAreCheckedWhenBuilt() {
        assertThatThrownBy(() -> TokenSignature.of("k1", new byte[0])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 to 64 bytes");
        assertThatThrownBy(() -> TokenSignature.of("k1", new byte[65])).hasMessageContaining("65 bytes");
        assertThatThrownBy(() -> TokenSignature.of("k#1", BYTES)).hasMessageContaining("'k#1'");
        byte[] bytes = BYTES.clone();
        TokenSignature signature = TokenSignature.of("k1", bytes);
        bytes[0] = 0;
        assertThat(signature.bytes()).isEqualTo(BYTES);
        assertThat(signature.matches(BYTES)).isTrue();
        assertThat(signature.matches(Arrays.copyOf(BYTES, 31))).isFalse();
    }
}
