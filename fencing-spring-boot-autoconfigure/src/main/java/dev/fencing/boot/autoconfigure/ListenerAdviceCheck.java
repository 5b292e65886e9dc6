package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.amqp.FencingTokenListenerAdvice;
import org.aopalliance.aop.Advice;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.SmartLifecycle;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Before the listener containers of its context start (a lifecycle phase ahead of theirs), names those, of the
 * {@code @RabbitListener} registries and those declared as beans, that trust no sender's token (INFO: the starter's
 * {@link ListenerAdviceInstaller#refusing()}) and fails startup on any with no {@code FencingTokenListenerAdvice} at
 * all: it would ignore the header, and an acquiring listener would set a sender's (perhaps a zombie's) token aside
 * unseen.
 */
final class ListenerAdviceCheck implements SmartLifecycle, ApplicationContextAware {

    /** Ahead of the listener containers and their registry ({@code Integer.MAX_VALUE}). */
    static final int PHASE = Integer.MAX_VALUE - 1000;

    private static final Log log = LogFactory.getLog(ListenerAdviceCheck.class);

    private ApplicationContext context;
    private volatile boolean running;

    @Override
    public void setApplicationContext(ApplicationContext context) {
        this.context = context;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public void stop() {
        running = false;
    }

    @Override
    public void start() {
        running = true;
        List<String> refusing = new ArrayList<>();
        List<String> ignoring = new ArrayList<>();
        ListenerAdviceInstaller installer = context.getBeanProvider(ListenerAdviceInstaller.class).getIfAvailable();
        Advice added = installer == null ? null : installer.installed();
        containers().forEach((name, container) -> {
            Advice[] chain = ListenerAdviceInstaller.chain(container);
            if (chain == null) {
                return;                                    // another Spring AMQP: nothing to tell
            }
            if (!ListenerAdviceInstaller.fenced(chain)) {
                ignoring.add(described(name, container));
            } else if (Arrays.stream(chain).filter(FencingTokenListenerAdvice.class::isInstance)
                    .allMatch(advice -> advice == added)) {
                refusing.add(described(name, container));
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
            throw new FencingConfigurationException("Listener containers " + ignoring + " have no "
                    + "FencingTokenListenerAdvice, so they would ignore the Fencing-Token header of their messages: a "
                    + "fenced write their listeners reach is refused as missing, but a @Fenced(acquire = true) method "
                    + "takes a lock of its own and writes, the sender's token (perhaps a zombie's) set aside unseen. "
                    + "The starter adds FencingTokenListenerAdvice.trustingNone() to container factories and "
                    + "containers that are beans; these were built otherwise (a factory that is not a bean) or had "
                    + "their advice chain replaced (a container customizer). Put FencingTokenListenerAdvice"
                    + ".trustingNone() in their advice chain, or new FencingTokenListenerAdvice(..) when their "
                    + "publishers are trusted: see docs/propagation.md, \"Another process over RabbitMQ\"");
        }
    }

    /** A container's name with its queues, which a generated listener id does not tell. */
    private static String described(String name, AbstractMessageListenerContainer container) {
        String[] queues = container.getQueueNames();
        return queues.length == 0 ? name : name + " (queues " + String.join(", ", queues) + ")";
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
