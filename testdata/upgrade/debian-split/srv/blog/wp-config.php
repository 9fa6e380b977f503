<?php /* secrets */
