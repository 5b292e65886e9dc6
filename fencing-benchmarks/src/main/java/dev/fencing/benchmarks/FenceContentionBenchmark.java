package dev.fencing.benchmarks;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.spring.EnableFencing;
import dev.fencing.token.FencingToken;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code @Fenced} with a key through {@code @EnableFencing}, in-memory store, throughput: one thread; two threads on
 * one resource (they serialize on its lock); two threads on different resources (they should not). The target
 * method touches no shared state; a no-op interceptor run the same ways gives the machine's own ceiling.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
public class FenceContentionBenchmark {

    AnnotationConfigApplicationContext context;
    Target target;
    Target interceptorProxy;
    final AtomicInteger threads = new AtomicInteger();

    @Setup(Level.Trial)
    public void setUp() {
        context = new AnnotationConfigApplicationContext(InMemoryFencing.class);
        target = context.getBean(Target.class);
        org.springframework.aop.framework.ProxyFactory factory =
                new org.springframework.aop.framework.ProxyFactory(new Target());
        factory.setProxyTargetClass(true);
        factory.addAdvice((org.aopalliance.intercept.MethodInterceptor) invocation -> invocation.proceed());
        interceptorProxy = (Target) factory.getProxy();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        context.close();
    }

    /** Each thread's account (its own, or account 0 for all) and its bound token. */
    @State(Scope.Thread)
    public static class Caller {
        long ownAccount;
        FencingScope scope;

        @Setup(Level.Trial)
        public void bind(FenceContentionBenchmark bench) {
            ownAccount = 100 + bench.threads.getAndIncrement();
            scope = FencingContext.bind(new FencingToken("bench:" + ownAccount, 1, "lease-" + ownAccount),
                    new FencingToken("bench:0", 1, "shared-lease"));
        }

        @TearDown(Level.Trial)
        public void unbind() {
            scope.close();
        }
    }

    @Benchmark
    @Threads(1)
    public long oneThread(Caller caller) {
        return target.fencedPure(caller.ownAccount, 1);
    }

    @Benchmark
    @Threads(2)
    public long twoThreadsOneResource(Caller caller) {
        return target.fencedPure(0, 1);
    }

    @Benchmark
    @Threads(2)
    public long twoThreadsDifferentResources(Caller caller) {
        return target.fencedPure(caller.ownAccount, 1);
    }

    /** What this machine lets two threads gain on a proxy call with no fence: the ceiling for the rows above. */
    @Benchmark
    @Threads(1)
    public long baselineOneThreadNoOpInterceptor(Caller caller) {
        return interceptorProxy.pure(caller.ownAccount, 1);
    }

    @Benchmark
    @Threads(2)
    public long baselineTwoThreadsNoOpInterceptor(Caller caller) {
        return interceptorProxy.pure(caller.ownAccount, 1);
    }
}
