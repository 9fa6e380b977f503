<?php /* xmlrpc */
