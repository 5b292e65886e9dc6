package dev.fencing.signing;

import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.Test;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Key material from configuration text: what is accepted, and errors that name the key but never show it. */
class KeyMaterialTest {

    @Test
    void hmacSecretsOfAtLeast256BitsAreAcceptedInEitherBase64Alphabet() {
        byte[] secret = new byte[32];
        secret[0] = (byte) 0xfb;
        secret[1] = (byte) 0xff; // '+' and '/' in the standard alphabet, '-' and '_' in the URL one
        assertThat(KeyMaterial.hmacSecret("k1", Base64.getEncoder().encodeToString(secret))).isEqualTo(secret);
        assertThat(KeyMaterial.hmacSecret("k1", Base64.getUrlEncoder().withoutPadding().encodeToString(secret)))
                .isEqualTo(secret);
        String wrapped = Base64.getMimeEncoder(8, "\n".getBytes()).encodeToString(secret);
        assertThat(KeyMaterial.hmacSecret("k1", "  " + wrapped + "\n")).isEqualTo(secret);
    }

    @Test
    void aShortHmacSecretFailsNamingTheKeyAndItsLengthButNotTheSecret() {
        String text = Base64.getEncoder().encodeToString("sixteen-byte-key".getBytes());
        assertThatThrownBy(() -> KeyMaterial.hmacSecret("k1", text))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("'k1'").hasMessageContaining("16 bytes (128 bits)")
                .hasMessageContaining("256 bits")
                .message().doesNotContain(text).doesNotContain("sixteen");
        assertThatThrownBy(() -> TokenSigner.hmac("k1", new byte[31])).hasMessageContaining("31 bytes");
        assertThatThrownBy(() -> VerificationKey.hmac("k1", new byte[31])).hasMessageContaining("31 bytes");
    }

    @Test
    void malformedBase64FailsWithoutEchoingTheText() {
        String text = "c2VjcmV0LXNlY3JldC1zZWNyZXQ*c2VjcmV0LXNlY3JldA==";
        assertThatThrownBy(() -> KeyMaterial.hmacSecret("main", text))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("'main'").hasMessageContaining("not valid Base64")
                .message().doesNotContain("c2VjcmV0").doesNotContain("*").doesNotContain("2a");
        assertThatThrownBy(() -> KeyMaterial.hmacSecret("main", " ")).hasMessageContaining("missing");
    }

    /** A placeholder left unresolved (its variable unset where the application runs) is named as one. */
    @Test
    void anUnresolvedPlaceholderIsNamedAsOne() {
        assertThatThrownBy(() -> KeyMaterial.hmacSecret("k1", "${FENCING_KEY_K1}"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("'k1'").hasMessageContaining("placeholder ${FENCING_KEY_K1}, never resolved");
    }

    @Test
    void ed25519KeysAreReadFromPemDerBase64AndRawBytes() {
        KeyPair pair = Keys.ed25519();
        String publicDer = Base64.getEncoder().encodeToString(pair.getPublic().getEncoded());
        String privateDer = Base64.getEncoder().encodeToString(pair.getPrivate().getEncoded());
        String publicPem = "-----BEGIN PUBLIC KEY-----\n" + publicDer + "\n-----END PUBLIC KEY-----\n";
        String privatePem = "-----BEGIN PRIVATE KEY-----\n" + privateDer + "\n-----END PRIVATE KEY-----\n";
        byte[] rawPublic = java.util.Arrays.copyOfRange(pair.getPublic().getEncoded(), 12, 44);
        byte[] rawPrivate = java.util.Arrays.copyOfRange(pair.getPrivate().getEncoded(), 16, 48);

        for (String publicText : new String[]{publicPem, publicDer, Base64.getEncoder().encodeToString(rawPublic)}) {
            assertThat(KeyMaterial.ed25519PublicKey("k1", publicText).getEncoded())
                    .isEqualTo(pair.getPublic().getEncoded());
        }
        for (String privateText : new String[]{privatePem, privateDer,
                Base64.getEncoder().encodeToString(rawPrivate)}) {
            TokenSigner signer = TokenSigner.ed25519("k1", KeyMaterial.ed25519PrivateKey("k1", privateText));
            TokenVerifier verifier = new TokenVerifier(KeyRing.of(VerificationKey.ed25519("k1",
                    KeyMaterial.ed25519PublicKey("k1", publicPem))));
            assertThat(verifier.verify(signer.sign(new dev.fencing.token.FencingToken("r", 1, "h"))))
                    .isEqualTo(Verification.VALID);
        }
    }

    @Test
    void aPrivateKeyWhereAPublicOneBelongsIsRefusedWithoutShowingIt() {
        KeyPair pair = Keys.ed25519();
        String privateDer = Base64.getEncoder().encodeToString(pair.getPrivate().getEncoded());
        String privatePem = "-----BEGIN PRIVATE KEY-----\n" + privateDer + "\n-----END PRIVATE KEY-----";
        assertThatThrownBy(() -> KeyMaterial.ed25519PublicKey("k2", privatePem))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("'k2'").hasMessageContaining("PRIVATE KEY")
                .hasMessageContaining("expected 'PUBLIC KEY'")
                .message().doesNotContain(privateDer.substring(0, 20));
        assertThatThrownBy(() -> KeyMaterial.ed25519PublicKey("k2", privateDer))
                .isInstanceOf(FencingConfigurationException.class)
                .message().doesNotContain(privateDer.substring(0, 20));
        assertThatThrownBy(() -> KeyMaterial.ed25519PublicKey("k2", "-----BEGIN PUBLIC KEY-----\nAAAA"))
                .hasMessageContaining("no '-----END PUBLIC KEY-----' line");
    }

    @Test
    void keysOfOtherAlgorithmsAreRefused() throws Exception {
        KeyPair rsa = KeyPairGenerator.getInstance("RSA").generateKeyPair();
        KeyPair ed448 = KeyPairGenerator.getInstance("Ed448").generateKeyPair();
        assertThatThrownBy(() -> KeyMaterial.ed25519PublicKey("k1",
                Base64.getEncoder().encodeToString(rsa.getPublic().getEncoded())))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("not an Ed25519");
        assertThatThrownBy(() -> TokenSigner.ed25519("k1", rsa.getPrivate()))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("not an Ed25519");
        assertThatThrownBy(() -> TokenSigner.ed25519("k1", ed448.getPrivate()))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("not an Ed25519");
        assertThatThrownBy(() -> VerificationKey.ed25519("k1", ed448.getPublic()))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("not an Ed25519");
    }

    @Test
    void keyIdsAndSchemeNamesAreChecked() {
        assertThatThrownBy(() -> TokenSigner.hmac("k.1", Keys.secret()))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("'k.1'")
                .hasMessageContaining("index 1");
        assertThatThrownBy(() -> TokenSigner.hmac("", Keys.secret())).hasMessageContaining("empty");
        assertThat(SignatureScheme.fromName("HMAC_SHA256")).isEqualTo(SignatureScheme.HMAC_SHA256);
        assertThat(SignatureScheme.fromName(" ed25519 ")).isEqualTo(SignatureScheme.ED25519);
        assertThatThrownBy(() -> SignatureScheme.fromName("rsa"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("'rsa'")
                .hasMessageContaining("hmac-sha256 or ed25519");
    }

    @Test
    void signersAndVerificationKeysComeFromConfigurationTextPerScheme() {
        String secret = Base64.getEncoder().encodeToString(Keys.secret());
        KeyPair pair = Keys.ed25519();
        String publicText = Base64.getEncoder().encodeToString(pair.getPublic().getEncoded());
        String privateText = Base64.getEncoder().encodeToString(pair.getPrivate().getEncoded());
        dev.fencing.token.FencingToken token = new dev.fencing.token.FencingToken("r", 1, "h");

        TokenVerifier hmac = new TokenVerifier(KeyRing.of(
                KeyMaterial.verificationKey(SignatureScheme.HMAC_SHA256, "h1", secret)));
        assertThat(hmac.verify(KeyMaterial.signer(SignatureScheme.HMAC_SHA256, "h1", secret).sign(token)))
                .isEqualTo(Verification.VALID);
        TokenVerifier ed = new TokenVerifier(KeyRing.of(
                KeyMaterial.verificationKey(SignatureScheme.ED25519, "e1", publicText)));
        assertThat(ed.verify(KeyMaterial.signer(SignatureScheme.ED25519, "e1", privateText).sign(token)))
                .isEqualTo(Verification.VALID);
        // the public key is no signing key, and a 48-byte HMAC secret is no Ed25519 key (any 32 bytes would pass as
        // a raw Ed25519 public key: nothing tells them apart, and such a key simply verifies nothing)
        assertThatThrownBy(() -> KeyMaterial.signer(SignatureScheme.ED25519, "e1", publicText))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("'e1'")
                .message().doesNotContain(publicText.substring(0, 16));
        String longSecret = Base64.getEncoder().encodeToString(new byte[48]);
        assertThatThrownBy(() -> KeyMaterial.verificationKey(SignatureScheme.ED25519, "e1", longSecret))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("48 bytes decoded")
                .hasMessageContaining("raw 32-byte key");
    }

    @Test
    void noToStringShowsKeyMaterial() {
        byte[] secret = Keys.secret();
        String encoded = Base64.getEncoder().encodeToString(secret);
        KeyPair pair = Keys.ed25519();
        String texts = TokenSigner.hmac("k1", secret) + " " + VerificationKey.hmac("k1", secret) + " "
                + TokenSigner.ed25519("k2", pair.getPrivate()) + " " + VerificationKey.ed25519("k2", pair.getPublic())
                + " " + new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", secret)));
        assertThat(texts).contains("k1", "k2", "hmac-sha256", "ed25519").doesNotContain(encoded.substring(0, 12))
                .doesNotContain(java.util.HexFormat.of().formatHex(secret).substring(0, 12));
    }
}
