package dev.fencing.issuer;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The contract for issuers that talk to a lock service over the network: on top of {@link TokenIssuerContract},
 * an unreachable service gives a clear error within the configured timeout.
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
}
