package dev.fencing.boot.autoconfigure;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import io.micrometer.core.instrument.MeterRegistry;
import org.aopalliance.aop.Advice;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * Puts {@link #refusing()} at the head of the advice chain of every listener container factory bean (once it is
 * initialized, before it builds a container) and container bean (before it builds its advised listener) that has no
 * {@link FencingTokenListenerAdvice}; chains that have one, trusting or not, are left as they are.
 */
final class ListenerAdviceInstaller implements BeanPostProcessor {

    private final ObjectProvider<MeterRegistry> registry;
    private volatile FencingTokenListenerAdvice refusing;

    /** @param registry where the added advice counts the fencing scopes a listener call left open (if unique) */
    ListenerAdviceInstaller(ObjectProvider<MeterRegistry> registry) {
        this.registry = registry;
    }

    /**
     * The advice added: one instance per context, so that {@link ListenerAdviceCheck} tells it from the application's
     * own; built with the first chain it goes into (the application's beans are there to be asked for then, a
     * post-processor being built ahead of them), counting leaks on the application's {@link MeterRegistry}.
     */
    FencingTokenListenerAdvice refusing() {
        FencingTokenListenerAdvice advice = refusing;
        if (advice == null) {
            synchronized (this) {
                advice = refusing;
                if (advice == null) {
                    advice = FencingTokenListenerAdvice.trustingNone().withMeterRegistry(registry.getIfUnique());
                    refusing = advice;
                }
            }
        }
        return advice;
    }

    /** The advice {@link #refusing()} built, {@code null} before it went into any chain. */
    FencingTokenListenerAdvice installed() {
        return refusing;
    }

    private static final Method CONTAINER_CHAIN =
            ReflectionUtils.findMethod(AbstractMessageListenerContainer.class, "getAdviceChain");

    static {
        if (CONTAINER_CHAIN != null) {
            ReflectionUtils.makeAccessible(CONTAINER_CHAIN);
        }
    }

    @Override
    public Object postProcessBeforeInitialization(Object bean, String beanName) {
        if (bean instanceof AbstractMessageListenerContainer container) {
            Advice[] chain = chain(container);
            if (chain != null && !fenced(chain)) {
                container.setAdviceChain(withRefusal(chain));
            }
        }
        return bean;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof AbstractRabbitListenerContainerFactory<?> factory) {
            Advice[] chain = factory.getAdviceChain();
            if (!fenced(chain)) {
                factory.setAdviceChain(withRefusal(chain));
            }
        }
        return bean;
    }

    /** The container's advice chain; {@code null} when this Spring AMQP has no such method (nothing is changed). */
    static Advice[] chain(AbstractMessageListenerContainer container) {
        if (CONTAINER_CHAIN == null) {
            return null;
        }
        Advice[] chain = (Advice[]) ReflectionUtils.invokeMethod(CONTAINER_CHAIN, container);
        return chain == null ? new Advice[0] : chain;
    }

    static boolean fenced(Advice[] chain) {
        return chain != null && Arrays.stream(chain).anyMatch(FencingTokenListenerAdvice.class::isInstance);
    }

    /** {@link #refusing()} first, so no other advice (a retry) runs for a message it rejects; then {@code chain}. */
    private Advice[] withRefusal(Advice[] chain) {
        int length = chain == null ? 0 : chain.length;
        Advice[] advised = new Advice[length + 1];
        advised[0] = refusing();
        if (length > 0) {
            System.arraycopy(chain, 0, advised, 1, length);
        }
        return advised;
    }
}
