package dev.fencing.boot.autoconfigure;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.amqp.internal.ListenerAdvices;
import io.micrometer.core.instrument.MeterRegistry;
import org.aopalliance.aop.Advice;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;


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
        return ListenerAdvices.chain(container);
    }

    static boolean fenced(Advice[] chain) {
        return ListenerAdvices.fenced(chain);
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
