package dev.fencing.signing;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;

import java.time.Duration;
import java.util.Objects;

/**
 * A {@link TokenIssuer} whose leases carry signed tokens: it acquires from the issuer it decorates and signs the
 * lease's token with a {@link TokenSigner}. Locking, release and loss are the decorated issuer's; only the token
 * differs. If signing fails, the lock is released before the exception is thrown.
 */
public final class SigningTokenIssuer implements TokenIssuer {

    private final TokenIssuer delegate;
    private final TokenSigner signer;

    public SigningTokenIssuer(TokenIssuer delegate, TokenSigner signer) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.signer = Objects.requireNonNull(signer, "signer");
    }

    /**
     * {@code issuer} signing with {@code signer}: {@code issuer} itself when it signs already (a
     * {@code SigningTokenIssuer}) or {@code signer} is {@code null}, wrapped in a {@code SigningTokenIssuer} otherwise.
     * For components that acquire for fenced writes and find the signing beans themselves.
     */
    public static TokenIssuer signing(TokenIssuer issuer, TokenSigner signer) {
        Objects.requireNonNull(issuer, "issuer");
        return signer == null || signs(issuer) ? issuer : new SigningTokenIssuer(issuer, signer);
    }

    /**
     * {@code issuer} as a component that acquires for fenced writes and found the signing beans itself uses it:
     * {@link #signing} with {@code signer}; without a signer, when checks here verify ({@code verifying}: a
     * {@link TokenVerifier} bean) and {@code issuer} does not sign, every write with its tokens would be refused as
     * forged, so it fails instead, naming {@code who}.
     *
     * @throws FencingConfigurationException naming {@code who}, the issuer's type and both fixes
     */
    public static TokenIssuer forAcquirer(String who, TokenIssuer issuer, TokenSigner signer, boolean verifying) {
        if (signer == null && verifying && !signs(issuer)) {
            throw new FencingConfigurationException(who + ": a TokenVerifier bean makes every @Fenced check refuse "
                    + "unsigned tokens, but the TokenIssuer (" + issuer.getClass().getSimpleName() + ") does not sign "
                    + "and there is no TokenSigner bean, so every write with its tokens would be refused as forged: "
                    + "add a TokenSigner bean (with the Spring Boot starter: fencing.signing.current-key-id and the "
                    + "key's secret or private-key), or acquire through new SigningTokenIssuer(issuer, signer)");
        }
        return signing(issuer, signer);
    }

    /** Whether the tokens of {@code issuer}'s leases are signed: it is a {@code SigningTokenIssuer}. */
    public static boolean signs(TokenIssuer issuer) {
        return issuer instanceof SigningTokenIssuer;
    }

    @Override
    public Lease acquire(String resource, Duration timeout) {
        Lease lease = delegate.acquire(resource, timeout);
        FencingToken signed;
        try {
            signed = signer.sign(lease.token());
        } catch (RuntimeException e) {
            try {
                lease.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw new LockAcquisitionException(resource, "Could not sign the token of the lock on '" + resource
                    + "' with key '" + signer.keyId() + "'; the lock was released: " + e.getClass().getName(), e);
        }
        return Lease.presenting(lease, signed);
    }

    @Override
    public void probe() {
        delegate.probe();
    }

    /** The issuer this one decorates. */
    public TokenIssuer delegate() {
        return delegate;
    }

    public TokenSigner signer() {
        return signer;
    }

    @Override
    public String toString() {
        return "SigningTokenIssuer[" + delegate + ", " + signer + "]";
    }
}
