package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.amqp.internal.ListenerAdvices;
import org.aopalliance.aop.Advice;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
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
 * unseen. It also fails startup on a container whose listener does not fit the application's advice in its chain: an
 * asynchronous listener (one Spring AMQP acknowledges when its result completes) whose failed results are requeued
 * by default or whose advice is not {@link FencingTokenListenerAdvice#forAsyncListeners()}, and a synchronous one
 * whose advice is. What it reads of the containers is fencing-amqp's ({@link ListenerAdvices}), which
 * {@code @EnableFencing}'s own check reads too, with or without Boot, once the singletons exist.
 */
final class ListenerAdviceCheck implements SmartLifecycle, ApplicationContextAware {

    /**
     * The first phase of all: ahead of the listener containers and their registry, whose phase is
     * {@code Integer.MAX_VALUE} by default but a factory's own when it sets one ({@code factory.setPhase(0)}), and
     * the registry then starts its containers in that phase.
     */
    static final int PHASE = Integer.MIN_VALUE;

    private static final Log log = LogFactory.getLog(ListenerAdviceCheck.class);

    /** How the advice gets into a container the starter could not reach. */
    static final String FIX = "The starter adds FencingTokenListenerAdvice.trustingNone() to container factories and "
            + "containers that are beans; these were built otherwise (a factory that is not a bean) or had their "
            + "advice chain replaced (a container customizer). Put FencingTokenListenerAdvice.trustingNone() in their "
            + "advice chain, or new FencingTokenListenerAdvice(..) when their publishers are trusted: see "
            + "docs/propagation.md, \"Another process over RabbitMQ\"";

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
        ListenerAdviceInstaller installer = context.getBeanProvider(ListenerAdviceInstaller.class).getIfAvailable();
        Advice added = installer == null ? null : installer.installed();
        Map<String, AbstractMessageListenerContainer> containers = ListenerAdvices.containers(context);
        // the application's advice: the starter's refusal alone needs no fit
        Map<String, AbstractMessageListenerContainer> own = new LinkedHashMap<>();
        containers.forEach((name, container) -> {
            Advice[] chain = ListenerAdvices.chain(container);
            if (chain == null || !ListenerAdvices.fenced(chain)) {
                return;                                    // another Spring AMQP, or named below as ignoring
            }
            if (Arrays.stream(chain).filter(FencingTokenListenerAdvice.class::isInstance)
                    .allMatch(advice -> advice == added)) {
                refusing.add(ListenerAdvices.described(name, container));
            } else {
                own.put(name, container);
            }
        });
        if (!refusing.isEmpty()) {
            log.info("fencing: listener containers " + refusing + " have no FencingTokenListenerAdvice of the "
                    + "application, so they trust no sender's Fencing-Token header: a message carrying one is "
                    + "rejected without requeue (FencingTokenListenerAdvice.trustingNone(), added by the starter). "
                    + "Add new FencingTokenListenerAdvice(..) to the factory of those whose publishers send tokens "
                    + "and are trusted: see docs/propagation.md, \"Another process over RabbitMQ\"");
        }
        String misfit = ListenerAdvices.misfitProblem(ListenerAdvices.misfitting(own, added));
        if (misfit != null) {
            throw new FencingConfigurationException(misfit);
        }
        String committing = ListenerAdvices.commitProblem(context, own);
        if (committing != null) {
            throw new FencingConfigurationException(committing);
        }
        String ignoring = ListenerAdvices.ignoringProblem(List.of(), ListenerAdvices.ignoring(containers), FIX);
        if (ignoring != null) {
            throw new FencingConfigurationException(ignoring);
        }
    }
}
