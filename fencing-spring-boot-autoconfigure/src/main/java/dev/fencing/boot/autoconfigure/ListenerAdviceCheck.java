package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.amqp.FencingTokenListenerAdvice;
import org.aopalliance.aop.Advice;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.adapter.AbstractAdaptableMessageListener;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.SmartLifecycle;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
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
 * unseen. It also fails startup on a container whose listener does not fit the application's advice in its chain: an
 * asynchronous listener (one Spring AMQP acknowledges when its result completes) whose failed results are requeued
 * by default or whose advice is not {@link FencingTokenListenerAdvice#forAsyncListeners()}, and a synchronous one
 * whose advice is.
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
        List<String> misfit = new ArrayList<>();
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
            } else {
                String misfits = misfits(container, chain, added);
                if (misfits != null) {
                    misfit.add(described(name, container) + ": " + misfits);
                }
            }
        });
        if (!refusing.isEmpty()) {
            log.info("fencing: listener containers " + refusing + " have no FencingTokenListenerAdvice of the "
                    + "application, so they trust no sender's Fencing-Token header: a message carrying one is "
                    + "rejected without requeue (FencingTokenListenerAdvice.trustingNone(), added by the starter). "
                    + "Add new FencingTokenListenerAdvice(..) to the factory of those whose publishers send tokens "
                    + "and are trusted: see docs/propagation.md, \"Another process over RabbitMQ\"");
        }
        if (!misfit.isEmpty()) {
            throw new FencingConfigurationException("Listener containers do not fit their "
                    + "FencingTokenListenerAdvice: " + String.join("; and ", misfit) + ". See docs/propagation.md, "
                    + "\"Another process over RabbitMQ\" (asynchronous listeners)");
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

    private static final Method DEFAULT_REQUEUE_REJECTED =
            ReflectionUtils.findMethod(AbstractAdaptableMessageListener.class, "isDefaultRequeueRejected");

    static {
        if (DEFAULT_REQUEUE_REJECTED != null) {
            ReflectionUtils.makeAccessible(DEFAULT_REQUEUE_REJECTED);
        }
    }

    /**
     * What does not fit between a container's listener and the application's advice in its chain, or {@code null}: an
     * asynchronous listener (a {@code CompletableFuture}, a {@code Mono}, a Kotlin suspend function) is acknowledged
     * or rejected when its result completes, outside the advice, so a fence refusal there is requeued unless the
     * listener adapter rejects without requeue by default, and the advice must not report its tokens at return; a
     * synchronous listener under {@link FencingTokenListenerAdvice#forAsyncListeners()} would have its unchecked
     * tokens go unreported.
     */
    private static String misfits(AbstractMessageListenerContainer container, Advice[] chain, Advice added) {
        List<FencingTokenListenerAdvice> own = Arrays.stream(chain)
                .filter(advice -> advice instanceof FencingTokenListenerAdvice && advice != added)
                .map(FencingTokenListenerAdvice.class::cast).toList();
        Object listener = container.getMessageListener();
        boolean async = listener instanceof MessageListener messageListener && messageListener.isAsyncReplies();
        List<String> misfits = new ArrayList<>(2);
        if (async) {
            if (requeues(listener)) {
                misfits.add("its asynchronous listener's failed results are requeued by default, a fence refusal "
                        + "among them, redelivered for ever: give its factory setDefaultRequeueRejected(false) "
                        + "(spring.rabbitmq.listener.simple.default-requeue-rejected=false, or .direct., with Boot's "
                        + "factory), which reaches the listener adapter that rejects the result");
            }
            if (own.stream().anyMatch(advice -> !advice.isForAsyncListeners())) {
                misfits.add("its asynchronous listener returns before its fenced work is done, so its "
                        + "FencingTokenListenerAdvice would report every message as unchecked: use "
                        + "new FencingTokenListenerAdvice(..).forAsyncListeners() for this container's factory");
            }
        } else if (own.stream().anyMatch(FencingTokenListenerAdvice::isForAsyncListeners)) {
            misfits.add("its listener is synchronous but its advice is FencingTokenListenerAdvice.forAsyncListeners(), "
                    + "which never reports a token the listener left unchecked: give it a factory with "
                    + "new FencingTokenListenerAdvice(..) without forAsyncListeners()");
        }
        return misfits.isEmpty() ? null : String.join("; ", misfits);
    }

    /**
     * Whether an asynchronous listener's failed result is requeued unless an {@code AmqpRejectAndDontRequeueException}
     * is in its cause chain (Spring AMQP's default); {@code true} for a listener this cannot tell: fail closed.
     */
    private static boolean requeues(Object listener) {
        if (listener instanceof AbstractAdaptableMessageListener adaptable && DEFAULT_REQUEUE_REJECTED != null) {
            return !Boolean.FALSE.equals(ReflectionUtils.invokeMethod(DEFAULT_REQUEUE_REJECTED, adaptable));
        }
        return true;
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
