package dev.fencing.boot.autoconfigure;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import org.aopalliance.aop.Advice;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Once its own context is refreshed (not a child's), names the listener containers, of the
 * {@code @RabbitListener} registries and those declared as beans, that trust no sender's token (INFO: the starter's
 * {@link ListenerAdviceInstaller#REFUSING}) and warns of those with no {@code FencingTokenListenerAdvice} at all,
 * which ignore the header.
 */
final class ListenerAdviceCheck implements ApplicationListener<ContextRefreshedEvent>, ApplicationContextAware {

    private static final Log log = LogFactory.getLog(ListenerAdviceCheck.class);

    private ApplicationContext context;

    @Override
    public void setApplicationContext(ApplicationContext context) {
        this.context = context;
    }

    @Override
    public void onApplicationEvent(ContextRefreshedEvent event) {
        if (event.getApplicationContext() != context) {
            return;
        }
        List<String> refusing = new ArrayList<>();
        List<String> ignoring = new ArrayList<>();
        containers().forEach((name, container) -> {
            Advice[] chain = ListenerAdviceInstaller.chain(container);
            if (chain == null) {
                return;                                    // another Spring AMQP: nothing to tell
            }
            if (!ListenerAdviceInstaller.fenced(chain)) {
                ignoring.add(name);
            } else if (Arrays.stream(chain).filter(FencingTokenListenerAdvice.class::isInstance)
                    .allMatch(advice -> advice == ListenerAdviceInstaller.REFUSING)) {
                refusing.add(name);
            }
        });
        if (!refusing.isEmpty()) {
            log.info("fencing: listener containers " + refusing + " have no FencingTokenListenerAdvice of the "
                    + "application, so they trust no sender's Fencing-Token header: a message carrying one is "
                    + "rejected without requeue (FencingTokenListenerAdvice.trustingNone(), added by the starter). "
                    + "Add new FencingTokenListenerAdvice(..) to the factory of those whose publishers send tokens "
                    + "and are trusted: see docs/propagation.md, \"Another process over RabbitMQ\"");
        }
        if (!ignoring.isEmpty()) {
            log.warn("fencing: listener containers " + ignoring + " have no FencingTokenListenerAdvice, so they "
                    + "ignore the Fencing-Token header of their messages: a fenced write their listeners reach is "
                    + "refused as missing, but a @Fenced(acquire = true) method takes a lock of its own and writes, "
                    + "the sender's token (perhaps a zombie's) set aside unseen. The starter adds "
                    + "FencingTokenListenerAdvice.trustingNone() to container factories and containers that are "
                    + "beans; these were built otherwise or had their advice chain replaced (a container "
                    + "customizer). Give them FencingTokenListenerAdvice.trustingNone(), or new "
                    + "FencingTokenListenerAdvice(..) when their publishers are trusted: see docs/propagation.md, "
                    + "\"Another process over RabbitMQ\"");
        }
    }

    /** By name: the registries' containers by listener id, then container beans by bean name. */
    private Map<String, AbstractMessageListenerContainer> containers() {
        Map<String, AbstractMessageListenerContainer> containers = new LinkedHashMap<>();
        context.getBeanProvider(RabbitListenerEndpointRegistry.class).orderedStream().forEach(registry -> {
            for (String id : registry.getListenerContainerIds()) {
                MessageListenerContainer container = registry.getListenerContainer(id);
                if (container instanceof AbstractMessageListenerContainer listening) {
                    containers.put(id, listening);
                }
            }
        });
        context.getBeansOfType(AbstractMessageListenerContainer.class, false, false)
                .forEach(containers::putIfAbsent);
        return containers;
    }
}
