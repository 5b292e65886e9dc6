package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.RejectionListener;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.signing.TokenVerifier;

import dev.fencing.mode.FenceModes;

import java.time.Duration;

/**
 * Creates the {@link ReactiveFencer} from the collaborators the blocking guard resolved (the reactive guard shares
 * its issuer, acquire timeout, rejection listener and verifier), the first time a reactive fenced method is found.
 */
@FunctionalInterface
interface ReactiveFencerFactory {

    /** Without Reactor or fencing-reactor on the class path: every reactive fenced method fails startup. */
    ReactiveFencerFactory ABSENT = (issuer, timeout, rejections, verifier, modes) -> {
        throw new FencingConfigurationException("reactive @Fenced methods need dev.fencing:fencing-reactor and "
                + "io.projectreactor:reactor-core on the class path; add fencing-reactor");
    };

    /**
     * @throws FencingConfigurationException when the reactive fence cannot be built (no reactive store), saying what
     *                                       to add
     */
    ReactiveFencer create(TokenIssuer issuer, Duration acquireTimeout, RejectionListener rejections,
                          TokenVerifier verifier, FenceModes modes);
}
