package dev.fencing.spring.support;

import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import org.springframework.core.ReactiveAdapter;

/**
 * The reactive side of the fence as the rest of the Spring glue sees it: no Reactor type in sight, so blocking
 * applications load none. Implemented by {@link ReactorFencer}, created only when Reactor and fencing-reactor are
 * on the class path.
 */
interface ReactiveFencer {

    /** Fails when the reactive guard cannot serve {@code point} (an acquiring point without an issuer). */
    void validate(FencePoint point);

    /**
     * The fenced method's result: a publisher of {@code adapter}'s type that runs {@code proceed.proceed(target)},
     * and the check, on each subscription. Never throws; every failure is an error signal.
     */
    <C> Object invoke(FencePoint point, ReactiveAdapter adapter, Object[] args, C target,
                      FenceGuard.Proceed<C, Object> proceed);

    /** Runs {@code verify()} on the reactive fence store, at startup. */
    void verifyStore();
}
