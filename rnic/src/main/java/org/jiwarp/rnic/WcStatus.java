package org.jiwarp.rnic;

/** The status of a work completion, named as libibverbs names them. */
public enum WcStatus {
    SUCCESS,
    /** A local scatter/gather entry was outside its region or needed access it lacks. */
    LOCAL_PROTECTION_ERROR,
    /** The received message was longer than the posted receive buffer. */
    LOCAL_LENGTH_ERROR,
    /** The queue pair failed locally (it sent a Terminate). */
    LOCAL_QP_OPERATION_ERROR,
    /** The peer refused remote access (it sent a Terminate with a protection error). */
    REMOTE_ACCESS_ERROR,
    /** The peer failed the operation (it sent a Terminate). */
    REMOTE_OPERATION_ERROR,
    /** The work request was outstanding when the queue pair went to ERROR. */
    WORK_REQUEST_FLUSH_ERROR,
    /** The connection was lost. */
    FATAL_ERROR
}
