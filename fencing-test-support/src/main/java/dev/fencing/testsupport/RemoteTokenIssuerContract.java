package dev.fencing.testsupport;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The contract for issuers that talk to a lock service over the network: on top of {@link TokenIssuerContract},
 * an unreachable service gives a clear error within the configured timeout.
 *
 * <p>An implementation provides, besides the methods {@link TokenIssuerContract} asks for,
 * {@link #unreachableIssuer()}, an issuer of the same kind configured for an address where nothing listens (closed
 * by the test when it is {@link AutoCloseable}), and {@link #unreachableServiceName()}, the text (such as that
 * address) its error must contain to name the service it could not reach. {@link TokenIssuer#probe()}, the health
 * check, answers while the service is up and fails naming the service, within seconds, when it cannot be reached.
 */
public abstract class RemoteTokenIssuerContract extends TokenIssuerContract {

    /** An issuer of the same kind pointed at an address where nothing listens. */
    protected abstract TokenIssuer unreachableIssuer();

    /** Text the error must contain to say which service was unreachable (e.g. the address). */
    protected abstract String unreachableServiceName();

    @Test
    void unreachableServiceFailsClearlyWithinTheTimeout() {
        TokenIssuer unreachable = unreachableIssuer();
        Duration timeout = Duration.ofSeconds(2);
        long started = System.nanoTime();
        Throwable failure = catchThrowable(() -> unreachable.acquire(freshResource(), timeout));
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(failure).isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining(unreachableServiceName());
        assertThat(elapsed).isLessThanOrEqualTo(timeout.plus(slack()).toMillis());
        if (unreachable instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    @Test
    void probeAnswersWhileTheServiceIsUp() {
        issuer().probe();
        otherIssuer().probe();
    }

    @Test
    void probeOfAnUnreachableServiceFailsNamingItWithinSeconds() {
        TokenIssuer unreachable = unreachableIssuer();
        long started = System.nanoTime();
        Throwable failure = catchThrowable(unreachable::probe);
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(failure).isInstanceOf(RuntimeException.class)
                .hasMessageContaining(unreachableServiceName());
        assertThat(elapsed).isLessThanOrEqualTo(Duration.ofSeconds(5).plus(slack()).toMillis());
        if (unreachable instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
    }
}
