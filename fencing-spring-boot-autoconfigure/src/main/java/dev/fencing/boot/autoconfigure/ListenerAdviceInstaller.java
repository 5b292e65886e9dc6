package dev.fencing.boot.autoconfigure;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.amqp.internal.ListenerAdvices;
import dev.fencing.guard.RejectionListener;
import dev.fencing.mode.FenceModes;
import dev.fencing.signing.TokenVerifier;
import io.micrometer.core.instrument.MeterRegistry;
import org.aopalliance.aop.Advice;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;


/**
 * Puts {@link #refusing()} at the head of the advice chain of every listener container factory bean (once it is
 * initialized, before it builds a container) and container bean (before it builds its advised listener) that has no
 * {@link FencingTokenListenerAdvice}. In chains that have one, trusting or not, where the application has a
 * {@link TokenVerifier} bean, each such advice that does not verify yet is replaced, in its place, by the same advice
 * {@link FencingTokenListenerAdvice#verifying verifying} with it (observing the resources the {@link FenceModes} bean
 * observes, and telling the {@link RejectionListener} beans of each forged token), as the starter's
 * {@code Fencing-Token} HTTP filter verifies: a forged token is rejected before the listener runs. Nothing else in
 * those chains changes.
 */
final class ListenerAdviceInstaller implements BeanPostProcessor {

    private final ObjectProvider<MeterRegistry> registry;
    private final ObjectProvider<TokenVerifier> verifier;
    private final ObjectProvider<FenceModes> modes;
    private final ObjectProvider<RejectionListener> rejections;
    private volatile FencingTokenListenerAdvice refusing;

    /**
     * @param registry   where the added advice counts the fencing scopes a listener call left open (if unique)
     * @param verifier   verifies the tokens of the application's advices (if unique)
     * @param modes      the resources whose forged tokens those advices bind for the fence to observe (if unique)
     * @param rejections told, in order, of each token those advices refuse as forged
     */
    ListenerAdviceInstaller(ObjectProvider<MeterRegistry> registry, ObjectProvider<TokenVerifier> verifier,
                            ObjectProvider<FenceModes> modes, ObjectProvider<RejectionListener> rejections) {
        this.registry = registry;
        this.verifier = verifier;
        this.modes = modes;
        this.rejections = rejections;
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
            } else if (chain != null) {
                Advice[] verified = verified(chain);
                if (verified != chain) {
                    container.setAdviceChain(verified);
                }
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
            } else {
                Advice[] verified = verified(chain);
                if (verified != chain) {
                    factory.setAdviceChain(verified);
                }
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

    /**
     * {@code chain} with each {@link FencingTokenListenerAdvice} that does not verify replaced by its verifying copy,
     * when there is a unique {@link TokenVerifier} bean; {@code chain} itself when nothing is replaced.
     */
    private Advice[] verified(Advice[] chain) {
        TokenVerifier tokens = verifier.getIfUnique();
        if (tokens == null) {
            return chain;
        }
        Advice[] verified = chain.clone();
        boolean replaced = false;
        for (int i = 0; i < verified.length; i++) {
            if (verified[i] instanceof FencingTokenListenerAdvice advice && !advice.isVerifying()
                    && advice != refusing) {
                verified[i] = advice.verifying(tokens).withModes(modes.getIfUnique())
                        .withRejectionListener(RejectionListener.all(rejections.orderedStream().toList()));
                replaced = true;
            }
        }
        return replaced ? verified : chain;
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
