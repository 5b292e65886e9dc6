package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.Verification;
import dev.fencing.token.FencingToken;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The signing beans {@code @EnableFencing} found: the context's {@link TokenSigner} (issuer side) and
 * {@link TokenVerifier} (resource side), each optional. With a signer, the tokens the guard acquires are signed
 * ({@link #issuer}); with a verifier, the guard verifies every checked token before its store sees it. Two beans of
 * one kind, or a signer whose tokens the verifier refuses, fail startup naming them.
 *
 * @param signer   the signer, or {@code null}
 * @param verifier the verifier, or {@code null}
 */
record TokenSigning(TokenSigner signer, TokenVerifier verifier) {

    static final TokenSigning NONE = new TokenSigning(null, null);

    /**
     * The unique signer and verifier beans (each may be absent).
     *
     * @throws FencingConfigurationException naming the beans when there are several of one kind, or when the signer's
     *                                       tokens would fail the verifier
     */
    static TokenSigning from(ObjectProvider<TokenSigner> signer, ObjectProvider<TokenVerifier> verifier) {
        TokenSigning signing = new TokenSigning(unique(signer, TokenSigner.class),
                unique(verifier, TokenVerifier.class));
        signing.requireVerifiable();
        return signing;
    }

    /** The one bean {@code provider} has, or {@code null}; several fail with the names and the fix. */
    static <T> T unique(ObjectProvider<T> provider, Class<T> type) {
        try {
            return provider.getIfAvailable();
        } catch (NoUniqueBeanDefinitionException e) {
            throw new FencingConfigurationException("@EnableFencing found " + e.getNumberOfBeansFound() + " "
                    + type.getSimpleName() + " beans " + e.getBeanNamesFound() + "; the fence uses one: keep one, "
                    + "or mark the one to use @Primary");
        }
    }

    /**
     * {@code issuer} as the guard uses it: wrapped in a {@link SigningTokenIssuer} when there is a signer and the
     * issuer does not sign already; {@code null} stays {@code null}.
     */
    TokenIssuer issuer(TokenIssuer issuer) {
        return issuer == null ? null : SigningTokenIssuer.signing(issuer, signer);
    }

    /**
     * What stops {@code @Fenced(acquire = true)} from working with this verifier, or {@code null}: a verifier, an
     * issuer that does not sign and no signer means every token acquired here is refused by the checks below it.
     */
    String acquireProblem(TokenIssuer issuer) {
        if (verifier == null || issuer == null || SigningTokenIssuer.signs(issuer)) {
            return null;
        }
        return "A TokenVerifier bean makes every @Fenced check refuse unsigned tokens, but the TokenIssuer ("
                + issuer.getClass().getSimpleName() + ") does not sign and there is no TokenSigner bean, so every "
                + "token @Fenced(acquire = true) takes would be refused as forged: add a TokenSigner bean (with the "
                + "Spring Boot starter: fencing.signing.current-key-id and the key's secret or private-key), or make "
                + "the issuer bean a SigningTokenIssuer";
    }

    /** Signs a probe token and verifies it: a signer whose key the verifier does not accept fails here, at startup. */
    private void requireVerifiable() {
        if (signer == null || verifier == null) {
            return;
        }
        FencingToken probe = signer.sign(new FencingToken("fencing-startup-probe", 1, "probe"));
        Verification result = new TokenVerifier(verifier.keyRing(), 0).verify(probe);
        if (!result.valid()) {
            throw new FencingConfigurationException("The TokenSigner (key '" + signer.keyId() + "', "
                    + signer.scheme().configName() + ") signs tokens the TokenVerifier refuses: "
                    + result.reason(probe) + " (verifier keys " + verifier.keyRing().activeKeyIds()
                    + ", retired " + verifier.keyRing().retiredKeyIds() + "); give both the same key material and "
                    + "sign with an active key");
        }
    }
}
