package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.AsyncReturnTypes;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.interceptor.AsyncExecutionInterceptor;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * Fenced methods that return a {@code Future} or {@code CompletionStage}. The supported shape is {@code @Fenced}
 * together with Spring's {@code @Async} on one method: the body, and the fence around it, run on the executor's
 * thread, so the check is made where the write happens, with the caller's tokens carried there by
 * context-propagation, and a rejection completes the returned future exceptionally. A future-returning
 * {@code @Fenced} method that is not {@code @Async} would be checked when it returns, while its work may still be
 * running elsewhere: refused when its fence point is built.
 */
final class AsyncMethods {

    static final String ASYNC = "org.springframework.scheduling.annotation.Async";

    private AsyncMethods() {
    }

    /** Whether {@code method} (or its class) is Spring's {@code @Async}: its body runs on an executor. */
    static boolean isAsync(Method method, Class<?> userClass) {
        return MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(ASYNC)
                || MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY).isPresent(ASYNC);
    }

    /** Whether {@code type} is a {@code Future} or {@code CompletionStage} (not a reactive type). */
    static boolean isFuture(Class<?> type) {
        return Future.class.isAssignableFrom(type) || CompletionStage.class.isAssignableFrom(type);
    }

    /**
     * {@code result}, the future an {@code @Async} method's body returned, once it is complete: the fence waits for it
     * inside the check, so a body that hands its write to another thread (returns {@code supplyAsync(...)} rather than
     * {@code completedFuture(...)}) is still checked before a later token's write, as the store's lock or row lock is
     * held until then. A future that completed exceptionally is returned as it is, not thrown: the check stands
     * (max_seen stays advanced), because work handed to another thread may have written before it failed, outside
     * the check's transaction, and undoing the check would let an older token write after it. The caller still sees
     * the failure, in the future.
     *
     * @throws InterruptedException when the waiting thread is interrupted (the call fails; the work may go on)
     */
    static Object awaited(Object result) throws Throwable {
        Future<?> future = result instanceof Future<?> f ? f
                : result instanceof CompletionStage<?> stage ? stage.toCompletableFuture() : null;
        if (future == null) {
            return result;
        }
        try {
            future.get();
        } catch (ExecutionException | CancellationException e) {
            // failed or cancelled: the future carries that to the caller; the check is not undone
        }
        return result;
    }

    /**
     * Fails when the fenced {@code method} returns a future and is not {@code @Async}; other deferred types are left
     * to {@link AsyncReturnTypes}.
     *
     * @throws FencingConfigurationException naming the method, its return type and the two shapes that work
     */
    static void checkFuture(Method method, Class<?> userClass, String operation) {
        Class<?> returnType = method.getReturnType();
        if (!isFuture(returnType) || isAsync(method, userClass)) {
            return;
        }
        throw new FencingConfigurationException("@Fenced on " + operation + " returns "
                + returnType.getTypeName() + " but is not @Async: the fence would check the token when the method "
                + "returns, while the work behind the future may still be running elsewhere, outside the check. "
                + "Either make it @Async (the fence then runs inside the asynchronous body, on the executor's thread; "
                + "carry the caller's tokens there with Spring's ContextPropagatingTaskDecorator on the executor), or "
                + "put @Fenced on the synchronous method that does the write and call that from the asynchronous code");
    }

    /**
     * Whether the fence of an {@code @Async} method on {@code proxy} would run before an asynchronous hand-off: its
     * advisor comes before an async advisor in the advice chain, counting proxies of proxies from the outside in, so
     * the write would run on another thread after the check. {@code false} when either is absent (without
     * {@code @EnableAsync} the body runs on the caller's thread, and so does its fence).
     */
    static boolean fenceOutsideAsync(Object proxy) {
        List<Advisor> chain = new ArrayList<>();
        Object current = proxy;
        while (current instanceof Advised advised && chain.size() < 1_000) {
            chain.addAll(Arrays.asList(advised.getAdvisors()));
            if (!advised.getTargetSource().isStatic()) {
                break;
            }
            try {
                current = advised.getTargetSource().getTarget();
            } catch (Exception e) {
                break;
            }
        }
        int lastAsync = -1;
        int fence = -1;
        for (int i = 0; i < chain.size(); i++) {
            Advisor advisor = chain.get(i);
            if (advisor.getAdvice() instanceof AsyncExecutionInterceptor) {
                lastAsync = i;
            } else if (fence < 0 && advisor instanceof FencingAdvisor) {
                fence = i;
            }
        }
        return fence >= 0 && fence < lastAsync;
    }
}
