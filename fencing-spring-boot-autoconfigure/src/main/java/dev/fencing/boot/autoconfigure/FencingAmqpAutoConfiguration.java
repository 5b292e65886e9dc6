package dev.fencing.boot.autoconfigure;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import org.aopalliance.aop.Advice;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * With fencing-amqp on the class path: once the context is refreshed, warns naming each {@code @RabbitListener}
 * container that has no {@link FencingTokenListenerAdvice}. Such a container ignores the {@code Fencing-Token} header
 * of its messages: a checking fenced write refuses the call as missing, but a {@code @Fenced(acquire = true)} method
 * takes a lock of its own and writes, the sender's token (perhaps a zombie's) set aside unseen. The advice is not
 * added for you: it trusts every publisher of the container's queues, a decision the application makes.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass({FencingTokenListenerAdvice.class, RabbitListenerEndpointRegistry.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
public class FencingAmqpAutoConfiguration {

    private static final Log log = LogFactory.getLog(FencingAmqpAutoConfiguration.class);

    @Bean
    static ApplicationListener<ContextRefreshedEvent> fencingListenerAdviceCheck(
            ObjectProvider<RabbitListenerEndpointRegistry> registries) {
        return event -> registries.orderedStream().forEach(registry -> {
            List<String> without = withoutAdvice(registry);
            if (!without.isEmpty()) {
                log.warn("fencing: @RabbitListener containers " + without + " have no FencingTokenListenerAdvice, so "
                        + "they ignore the Fencing-Token header of their messages: a fenced write their listeners "
                        + "reach is refused as missing, but a @Fenced(acquire = true) method takes a lock of its own "
                        + "and writes, the sender's token (perhaps a zombie's) set aside unseen. Add the advice to "
                        + "their container factory (factory.setAdviceChain(new FencingTokenListenerAdvice(..))) "
                        + "when their messages may carry tokens: see docs/propagation.md, \"Another process over "
                        + "RabbitMQ\"");
            }
        });
    }

    /** The ids of the registry's containers whose advice chain holds no {@link FencingTokenListenerAdvice}. */
    static List<String> withoutAdvice(RabbitListenerEndpointRegistry registry) {
        Method adviceChain = ReflectionUtils.findMethod(AbstractMessageListenerContainer.class, "getAdviceChain");
        if (adviceChain == null) {
            return List.of();                      // another Spring AMQP: nothing to tell
        }
        ReflectionUtils.makeAccessible(adviceChain);
        List<String> without = new ArrayList<>();
        for (String id : registry.getListenerContainerIds()) {
            MessageListenerContainer container = registry.getListenerContainer(id);
            if (container instanceof AbstractMessageListenerContainer listening) {
                Advice[] chain = (Advice[]) ReflectionUtils.invokeMethod(adviceChain, listening);
                if (chain == null || Arrays.stream(chain).noneMatch(FencingTokenListenerAdvice.class::isInstance)) {
                    without.add(id);
                }
            }
        }
        return without;
    }
}
