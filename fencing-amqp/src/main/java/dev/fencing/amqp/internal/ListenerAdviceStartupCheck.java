package dev.fencing.amqp.internal;

import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import java.util.Map;
import java.util.function.BiFunction;

/**
 * {@code @EnableFencing}'s startup check (listed in {@code META-INF/fencing/startup-checks.factories}, with or
 * without Spring Boot; a {@code BiFunction} answering the problem or {@code null}, so that this module imports no
 * type of the Spring glue)
 * that no Spring AMQP listener container ignores the {@code Fencing-Token} header: every listener container factory
 * bean, container bean and {@code @RabbitListener} container built by then must have a
 * {@link dev.fencing.amqp.FencingTokenListenerAdvice} in its advice chain ({@code trustingNone()} when its publishers
 * are not trusted), none of them behind a stateless retry (Spring AMQP's retried attempts skip the advices
 * behind it), and none whose container commits a transaction of its own while the fence store judges at
 * commit. The starter adds {@code trustingNone()} to the factories and containers that are beans, and
 * checks again before the containers start (then also whether an asynchronous listener fits its advice).
 */
final class ListenerAdviceStartupCheck implements BiFunction<ListableBeanFactory, Environment, String> {

    private static final String RABBIT = "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer";

    static final String FIX = "Put FencingTokenListenerAdvice.trustingNone() in their advice chain "
            + "(factory.setAdviceChain(FencingTokenListenerAdvice.trustingNone(), ..)), so a message carrying the "
            + "header is rejected without requeue, or new FencingTokenListenerAdvice(..) when their publishers are "
            + "trusted: see docs/propagation.md, \"Another process over RabbitMQ\"";

    @Override
    public String apply(ListableBeanFactory beans, Environment environment) {
        ClassLoader loader = beans instanceof ConfigurableBeanFactory factory ? factory.getBeanClassLoader()
                : getClass().getClassLoader();
        if (!ClassUtils.isPresent(RABBIT, loader)) {
            return null;
        }
        Map<String, AbstractMessageListenerContainer> containers = ListenerAdvices.containers(beans);
        String ignoring = ListenerAdvices.ignoringProblem(ListenerAdvices.unfencedFactories(beans),
                ListenerAdvices.ignoring(containers), FIX);
        if (ignoring != null) {
            return ignoring;
        }
        String retry = ListenerAdvices.retryProblem(beans, containers);
        return retry != null ? retry : ListenerAdvices.commitProblem(beans, containers);
    }
}
