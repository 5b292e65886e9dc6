package dev.fencing.amqp.internal;

import dev.fencing.spring.FencingStartupCheck;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * {@code @EnableFencing}'s startup check (loaded from {@code META-INF/spring.factories}, with or without Spring Boot)
 * that no Spring AMQP listener container ignores the {@code Fencing-Token} header: every listener container factory
 * bean, container bean and {@code @RabbitListener} container built by then must have a
 * {@link dev.fencing.amqp.FencingTokenListenerAdvice} in its advice chain ({@code trustingNone()} when its publishers
 * are not trusted). The starter adds {@code trustingNone()} to the factories and containers that are beans, and
 * checks again before the containers start (then also whether an asynchronous listener fits its advice).
 */
final class ListenerAdviceStartupCheck implements FencingStartupCheck {

    private static final String RABBIT = "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer";

    static final String FIX = "Put FencingTokenListenerAdvice.trustingNone() in their advice chain "
            + "(factory.setAdviceChain(FencingTokenListenerAdvice.trustingNone(), ..)), so a message carrying the "
            + "header is rejected without requeue, or new FencingTokenListenerAdvice(..) when their publishers are "
            + "trusted: see docs/propagation.md, \"Another process over RabbitMQ\"";

    @Override
    public String problem(ListableBeanFactory beans, Environment environment) {
        ClassLoader loader = beans instanceof ConfigurableBeanFactory factory ? factory.getBeanClassLoader()
                : getClass().getClassLoader();
        if (!ClassUtils.isPresent(RABBIT, loader)) {
            return null;
        }
        return ListenerAdvices.ignoringProblem(ListenerAdvices.unfencedFactories(beans),
                ListenerAdvices.ignoring(ListenerAdvices.containers(beans)), FIX);
    }
}
