package dev.fencing.shedlock;

import org.springframework.context.annotation.Import;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Fences ShedLock jobs: every ShedLock {@code LockProvider} bean of the context is wrapped in a
 * {@link FencingLockProvider} with the context's {@code TokenIssuer}, so a {@code @SchedulerLock} job runs with a
 * token bound for its resources. Startup fails, naming what is wrong, when there is no {@code TokenIssuer} bean, no
 * {@code LockProvider} bean, a mapping that does not parse, or (with {@link #mappedOnly()}) a {@code @SchedulerLock}
 * name without a mapping. Declared on several configuration classes, their mappings are merged, {@link #mappedOnly()}
 * holds when any of them sets it, and their {@link #acquireTimeout()}s must be equal.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(SchedulerLockFencingRegistrar.class)
public @interface EnableSchedulerLockFencing {

    /**
     * Lock names mapped to the resources their jobs write, each {@code "lockName=resource[,resource...]"}
     * (placeholders resolved); a name without a mapping is fenced under its own name, unless {@link #mappedOnly()}.
     */
    String[] resources() default {};

    /** Whether every {@code @SchedulerLock} name must be mapped in {@link #resources()}: checked at startup. */
    boolean mappedOnly() default false;

    /** How long a job waits for the issuer's lease once ShedLock granted its lock, as a {@code java.time.Duration}. */
    String acquireTimeout() default "PT5S";
}
