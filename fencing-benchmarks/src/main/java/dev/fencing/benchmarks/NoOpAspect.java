package dev.fencing.benchmarks;

import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;

/** An {@code @Around} advice that does nothing but proceed: the price of Spring's {@code @Aspect} adapter. */
@Aspect
public class NoOpAspect {

    @Around("execution(* dev.fencing.benchmarks.Target.plain(..))")
    public Object around(ProceedingJoinPoint pjp) throws Throwable {
        return pjp.proceed();
    }
}
