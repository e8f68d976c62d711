package org.jiwarp.mpa;

/**
 * The application's say on an incoming connection: called on the channel's event loop with each
 * valid MPA Request. It must eventually call {@link MpaConnectRequest#accept(byte[])} or
 * {@link MpaConnectRequest#reject(byte[])}, now or later, from any thread.
 */
@FunctionalInterface
public interface MpaAcceptor {

    void onRequest(MpaConnectRequest request);

    /** Accepts every connection with no private data. */
    MpaAcceptor ACCEPT_ALL = request -> request.accept(new byte[0]);
}
